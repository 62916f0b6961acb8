/**
 * An upstream that cannot be reached at start: `ptc serve` refuses to start (exit 1, naming it) unless
 * `--allow-missing`, and then says which upstream is down, in its readiness line and in run_code's
 * description, while the others serve. A real child process, driven by the MCP SDK's client over stdio.
 */
import { execFile } from 'node:child_process'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { CodeRuntime } from '@ptc/sandbox'
import { createQuickJSRuntime } from '@ptc/sandbox-quickjs'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { createPtcMcpServer, UpstreamUnavailableError } from '@ptc/mcp'
import { connectInMemory, connectStdioClient, inMemoryFixture, type CallToolResult } from '@ptc/mcp/testing'

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..')
const tsNode = ['--conditions=@ptc/source', '--import', 'tsx']
const bin = join(root, 'packages/mcp/src/bin.ts')
const fixture = join(root, 'packages/mcp/src/testing/fixture-server.ts')
/** A command that does not exist: spawning it fails at once. */
const MISSING = '/nonexistent/ptc-missing-upstream'

let runtime: CodeRuntime
beforeAll(() => {
  runtime = createQuickJSRuntime({ poolSize: 1 })
})
afterAll(async () => {
  await runtime.dispose()
})

function serve(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((done) => {
    const child = execFile(
      process.execPath,
      [...tsNode, bin, ...args],
      { cwd: root, timeout: 60_000 },
      (_error, stdout, stderr) => done({ code: child.exitCode, stdout, stderr }),
    )
    child.stdin?.end()
  })
}

describe('an upstream that cannot be connected at start', () => {
  test('createPtcMcpServer rejects with UpstreamUnavailableError naming it, and leaves no upstream running', async () => {
    const error = await createPtcMcpServer({
      upstreams: [
        { name: 'fx', transport: inMemoryFixture() },
        { name: 'down', command: MISSING },
      ],
      runtime,
      onWarning: () => undefined,
    }).then(
      () => undefined,
      (e: unknown) => e,
    )
    expect(error).toBeInstanceOf(UpstreamUnavailableError)
    const down = error as UpstreamUnavailableError
    expect(down.upstream).toBe('down')
    expect(down.message).toMatch(
      /^upstream down could not be connected: .+; start it, or serve without it until it connects \(allowMissing; ptc serve --allow-missing\)$/,
    )
  })

  test('with allowMissing the others serve, and run_code says which upstream is not connected', async () => {
    const warnings: string[] = []
    await using ptc = await createPtcMcpServer({
      upstreams: [
        { name: 'fx', transport: inMemoryFixture() },
        { name: 'down', command: MISSING },
      ],
      runtime,
      allowMissing: true,
      reconnect: { initialMs: 60_000 },
      onWarning: (m) => warnings.push(m),
    })
    expect(warnings).toContainEqual(
      expect.stringMatching(
        /^upstream down could not be connected: .+ \(retrying in the background; --allow-missing\)$/,
      ),
    )
    const client = await connectInMemory(ptc)
    const [runCodeTool] = (await client.listTools()).tools
    expect(runCodeTool?.description).toContain('"fx.echo"')
    expect(runCodeTool?.description).toContain(
      'Not connected now (reconnecting): upstream down. Its tools appear, or work again, once it connects.',
    )
    const result = (await client.callTool({
      name: 'run_code',
      arguments: { code: 'return await tools["fx.echo"]({ text: "up" })', description: 'echo' },
    })) as CallToolResult
    expect(result.structuredContent).toEqual({ logs: [], result: 'up' })
    await client.close()
  })

  test('ptc serve exits 1 with the upstream named and --allow-missing suggested; nothing is written to the MCP channel', async () => {
    const { code, stdout, stderr } = await serve(['--upstream', `down=${MISSING}`])
    expect(code).toBe(1)
    expect(stdout).toBe('')
    expect(stderr).toMatch(
      /^ptc serve: upstream down could not be connected: .+; start it, or serve without it until it connects \(allowMissing; ptc serve --allow-missing\)$/m,
    )
    expect(stderr).not.toMatch(/ready/)
  }, 60_000)

  test('ptc serve --allow-missing prints a readiness line naming the upstream that is down, and serves the others', async () => {
    const { client, transport } = await connectStdioClient(
      process.execPath,
      [
        ...tsNode,
        bin,
        '--upstream',
        `down=${MISSING}`,
        '--upstream',
        `fx=node ${tsNode.join(' ')} ${fixture}`,
        '--allow-missing',
      ],
      { cwd: root },
    )
    let stderr = ''
    transport.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')))
    try {
      const result = (await client.callTool({
        name: 'run_code',
        arguments: { code: 'return await tools["fx.add"]({ a: 1, b: 2 })', description: 'add' },
      })) as CallToolResult
      expect(result.structuredContent).toEqual({ logs: [], result: { sum: 3 } })
      await expect
        .poll(() => stderr)
        .toMatch(
          /^ptc serve: ready \(stdio, code mode\): 5 tools; upstream down not connected \(retrying\); upstream fx connected$/m,
        )
    } finally {
      await client.close()
    }
  }, 60_000)
})
