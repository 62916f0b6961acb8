/**
 * `ptc serve` as a child process, driven by the MCP SDK's real client over
 * stdio, in front of the real filesystem server from the npm registry and a
 * small fixture server that the test kills mid-call.
 */
import { existsSync } from 'node:fs'
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { connectStdioClient, type CallToolResult, type Client } from '@ptc/mcp/testing'
import { until } from './http-helpers.js'
import { readPid } from './serve-process.js'

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..')
const requireFromMcp = createRequire(join(root, 'packages/mcp/package.json'))
const filesystemServer = join(
  dirname(requireFromMcp.resolve('@modelcontextprotocol/server-filesystem/package.json')),
  'dist/index.js',
)
const tsNode = ['--conditions=@ptc/source', '--import', 'tsx']
const fixture = join(root, 'packages/mcp/src/testing/fixture-server.ts')

let dir: string
let client: Client
let sessionFile: string
let pidFile: string

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ptc-serve-'))
  await writeFile(join(dir, 'a.txt'), 'alpha')
  await writeFile(join(dir, 'b.txt'), 'bravo')
  await writeFile(join(dir, 'c.txt'), 'charlie')
  sessionFile = join(dir, 'session.jsonl')
  pidFile = join(dir, 'fixture.pid')
  ;({ client } = await connectStdioClient(
    process.execPath,
    [
      ...tsNode,
      join(root, 'packages/mcp/src/bin.ts'),
      '--upstream',
      `fs=node ${filesystemServer} ${dir}`,
      '--upstream',
      `slow=node ${tsNode.join(' ')} ${fixture} --pid-file ${pidFile}`,
      '--session',
      sessionFile,
      // Every declaration in run_code's description: the filesystem server's exceed the discovery budget.
      '--no-discovery',
    ],
    { cwd: root },
  ))
}, 60_000)

afterAll(async () => {
  await client?.close()
  await rm(dir, { recursive: true, force: true })
})

const runCode = (code: string): Promise<CallToolResult> =>
  client.callTool({ name: 'run_code', arguments: { code, description: 'test' } }, undefined, {
    timeout: 30_000,
  }) as Promise<CallToolResult>
const text = (r: CallToolResult): string =>
  r.content.map((b) => (b.type === 'text' ? b.text : `[${b.type}]`)).join('\n')

describe('ptc serve over stdio', () => {
  test('lists run_code, whose SDK text declares the filesystem tools as tools["fs.<name>"]', async () => {
    const { tools } = await client.listTools()
    expect(tools.map((t) => t.name)).toEqual(['run_code'])
    expect(tools[0]?.description).toContain('"fs.read_text_file"')
    expect(tools[0]?.description).toContain('"slow.sleep"')
  })

  test('a program reads three files in parallel through the real filesystem server, and the session log has every sub-call', async () => {
    const result = await runCode(`
      const names = ["a.txt", "b.txt", "c.txt"]
      const files = await Promise.all(names.map((n) => tools["fs.read_text_file"]({ path: ${JSON.stringify(dir)} + "/" + n })))
      const listing = await tools["fs.list_directory"]({ path: ${JSON.stringify(dir)} })
      console.log(listing.content.includes("a.txt") ? "listed" : "missing")
      return files.map((f) => f.content).join(",")`)
    expect(result.isError).toBeFalsy()
    expect(text(result)).toBe('listed\nalpha,bravo,charlie')
    const events = (await readFile(sessionFile, 'utf8'))
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as Record<string, unknown>)
    const done = events.filter((e) => e['type'] === 'tool/ptc-dispatch')
    const started = events.filter((e) => e['type'] === 'tool/ptc-dispatch-start')
    expect(done.map((e) => e['name']).sort()).toEqual([
      'fs.list_directory',
      'fs.read_text_file',
      'fs.read_text_file',
      'fs.read_text_file',
    ])
    expect(started).toHaveLength(4)
    expect(done.every((e) => e['isError'] === false)).toBe(true)
    expect(events.some((e) => e['type'] === 'tool/result')).toBe(true)
  })

  test('an upstream killed mid-call fails that call; the next call reconnects; the server keeps serving', async () => {
    await until(() => existsSync(pidFile), 10_000)
    const sleeping = `${pidFile}.sleeping`
    await rm(sleeping, { force: true })
    const run = runCode(`
      let first
      try { first = await tools["slow.sleep"]({ ms: 20000 }) } catch (e) { first = "failed: " + e.message }
      const second = await tools["slow.echo"]({ text: "back" })
      return { first, second }`)
    await until(() => existsSync(sleeping), 10_000)
    process.kill(await readPid(sleeping), 'SIGKILL')
    const result = await run
    const value = JSON.parse(text(result)) as { first: string; second: string }
    expect(value.first).toMatch(/^failed: .*(closed|Connection)/i)
    expect(value.second).toBe('back')
    const later = await runCode('return await tools["slow.sleep"]({ ms: 1 })')
    expect(text(later)).toBe('slept 1')
    expect((await client.listTools()).tools.map((t) => t.name)).toEqual(['run_code'])
  })
})
