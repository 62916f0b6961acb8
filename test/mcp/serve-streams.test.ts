/**
 * `ptc serve` when the streams around it misbehave: a client that closes the process's stdout or stderr, and one
 * that does not read its stderr while an upstream writes a lot there. Before: a write to a closed stdout or stderr
 * (EPIPE) ended the process, its upstream left running and its log cut; an unread stderr grew the process by all
 * an upstream wrote to its own stderr.
 */
import { existsSync, writeFileSync } from 'node:fs'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { PassThrough } from 'node:stream'
import type { CodeRuntime } from '@ptc/sandbox'
import { createQuickJSRuntime } from '@ptc/sandbox-quickjs'
import { defineTool, ToolsService } from '@ptc/tools'
import { readJsonlSession } from '@ptc/tools/session'
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest'
import { createPtcMcpServer, MAX_STDERR_BACKLOG, serveCommand } from '@ptc/mcp'
import { connectInMemory, type CallToolResult } from '@ptc/mcp/testing'
import { INITIALIZE, until } from './http-helpers.js'
import { alive, fixture, readPid, root, SERVE_BINARIES, spawnServe, tsNode } from './serve-process.js'

let dir: string
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ptc-serve-streams-'))
})
afterAll(async () => {
  await rm(dir, { recursive: true, force: true })
})

/**
 * The fixture upstream behind a shell script that first writes `before` bytes to stderr, then, once the file `go`
 * exists, `after` bytes and the line `after-the-flood`, then creates `go.done` (the fixture's pid: `go.pid`).
 */
function noisyFixture(
  name: string,
  before: number,
  after: number,
): { command: string; args: string[]; commandLine: string; go: string } {
  const go = join(dir, `${name}.go`)
  const script = join(dir, `${name}.sh`)
  writeFileSync(
    script,
    // The waiting loop also ends with the fixture ($$ is its pid after exec): a test that never creates `go`
    // must not leave it behind.
    `head -c ${before} /dev/zero >&2\n(while [ ! -f "$2" ]; do kill -0 $$ 2>/dev/null || exit 0; sleep 0.05; done; head -c ${after} /dev/zero >&2; echo after-the-flood >&2; touch "$2.done") &\nexec "$1" ${tsNode.join(' ')} "$3" --pid-file "$2.pid"\n`,
  )
  const args = [script, process.execPath, go, fixture]
  return { command: 'sh', args, commandLine: ['sh', ...args].join(' '), go }
}

describe('an upstream writing to a stderr nobody reads', () => {
  let runtime: CodeRuntime
  beforeAll(() => {
    runtime = createQuickJSRuntime({ poolSize: 1 })
  })
  afterAll(async () => {
    await runtime.dispose()
  })

  test('holds at most MAX_STDERR_BACKLOG of it, drops the rest with a count, and is served meanwhile', async () => {
    const flood = 20_000_000
    const noisy = noisyFixture('flood', flood, 0)
    // A stream nobody reads, as the stderr pipe of a client that does not read it.
    const sink = new PassThrough()
    const warnings: string[] = []
    await using ptc = await createPtcMcpServer({
      upstreams: [{ name: 'up', command: noisy.command, args: noisy.args, cwd: root }],
      runtime,
      upstreamStderr: sink,
      onWarning: (m) => warnings.push(m),
    })
    const client = await connectInMemory(ptc)
    try {
      const result = (await client.callTool({
        name: 'run_code',
        arguments: { code: 'return await tools["up.echo"]({ text: "still served" })', description: 'echo' },
      })) as CallToolResult
      expect(result.content).toEqual([{ type: 'text', text: 'still served' }])
      // Before: all 20 MB waited in the sink. Now the backlog, and what the sink took into its readable side (less
      // than its high-water mark); the chunk that took it past that mark counts on both sides until it is read
      // (a pipe's chunk: at most 64 KiB). A loaded run measured the backlog plus 72 KiB.
      expect(sink.writableLength + sink.readableLength).toBeLessThanOrEqual(
        MAX_STDERR_BACKLOG + sink.readableHighWaterMark + 65_536,
      )

      let forwarded = ''
      sink.setEncoding('latin1').on('data', (chunk: string) => (forwarded += chunk))
      await writeFile(noisy.go, '')
      await until(() => forwarded.includes('after-the-flood\n'), 20_000)
      const dropped = warnings
        .map(
          (w) =>
            /^upstream up: (\d+) bytes of its stderr were dropped \(the stderr it goes to was not read as fast as it wrote\)$/.exec(
              w,
            )?.[1],
        )
        .filter((n) => n !== undefined)
      expect(dropped).toHaveLength(1)
      // Every byte it wrote was either forwarded or counted as dropped.
      expect(forwarded.length - 'after-the-flood\n'.length + Number(dropped[0])).toBe(flood)
      expect(forwarded.length).toBeLessThanOrEqual(MAX_STDERR_BACKLOG + 65_536 + 'after-the-flood\n'.length)
    } finally {
      await client.close()
    }
  }, 90_000)
})

describe('ptc serve (stdio) whose client does not read its answers', () => {
  test('takes no more requests once answers wait, and answers every one once they are read (but one cancelled meanwhile)', async () => {
    const tools = new ToolsService()
    let ran = 0
    tools.register(
      defineTool({
        name: 'tick',
        description: 'Counts runs.',
        parameters: {},
        output: { schema: { type: 'json' } },
        execute: async () => ++ran,
      }),
    )
    // A real ptc serve in this process, over streams: stdout is never read, as a pipe nobody reads.
    const stdin = new PassThrough()
    const stdout = new PassThrough()
    const stop = new AbortController()
    const served = serveCommand([], { stdin, stdout, stderr: new PassThrough() }, { tools, signal: stop.signal })
    const lines: string[] = []
    const warnings: string[] = []
    const onWarning = (warning: Error): void => void warnings.push(`${warning.name}: ${warning.message}`)
    process.on('warning', onWarning)
    let rest = ''
    const read = (chunk: Buffer): void => {
      const parts = (rest + chunk.toString()).split('\n')
      rest = parts.pop() ?? ''
      lines.push(...parts)
    }
    try {
      const send = (message: unknown): void => void stdin.write(`${JSON.stringify(message)}\n`)
      stdout.on('data', read)
      send(INITIALIZE)
      await until(() => lines.length === 1, 30_000)
      stdout.off('data', read)
      stdout.pause()
      send({ jsonrpc: '2.0', method: 'notifications/initialized' })
      const requests = 45
      for (let id = 2; id < 2 + requests; id++) {
        send({
          jsonrpc: '2.0',
          id,
          method: 'tools/call',
          params: {
            name: 'run_code',
            arguments: { code: 'await tools.tick({}); return "x".repeat(400000)', description: `answer ${id}` },
          },
        })
      }
      // Until the count has not moved for 1 s (or all ran: the failure before, every answer held, about 36 MB).
      await until(() => ran > 0, 30_000)
      let count = -1
      for (let still = 0; still < 10 && count < requests; ) {
        await new Promise((resolve) => setTimeout(resolve, 100))
        still = ran === count ? still + 1 : 0
        count = ran
      }
      // About 800 KB per answer (its text and its structured value): MAX_STDOUT_BACKLOG (8 MiB) of them, and
      // up to MAX_REQUESTS_IN_FLIGHT (16) more.
      expect(count).toBeGreaterThan(0)
      expect(count).toBeLessThanOrEqual(11 + 16 + 2)
      // A waiting request the client cancels is dropped (no answer, never run).
      const last = requests + 1
      send({
        jsonrpc: '2.0',
        method: 'notifications/cancelled',
        params: { requestId: last, reason: 'no longer needed' },
      })
      stdout.on('data', read)
      stdout.resume()
      await until(() => lines.length === requests, 60_000)
      await new Promise((resolve) => setTimeout(resolve, 200))
      expect(ran).toBe(requests - 1)
      expect(lines).toHaveLength(requests)
      const answers = lines
        .slice(1)
        .map(
          (line) =>
            JSON.parse(line) as { id: number; result: { isError?: boolean; structuredContent?: { result?: string } } },
        )
      expect(answers.map((a) => a.id).sort((a, b) => a - b)).toEqual(
        Array.from({ length: requests - 1 }, (_, i) => i + 2),
      )
      expect(
        answers.every((a) => a.result.isError !== true && a.result.structuredContent?.result?.length === 400_000),
      ).toBe(true)
      // Many answers waited on stdout's 'drain' at once: no listener-leak warning.
      expect(warnings.filter((w) => w.startsWith('MaxListenersExceededWarning'))).toEqual([])
    } finally {
      process.off('warning', onWarning)
      stop.abort()
      expect(await served).toBe(0)
    }
  }, 120_000)
})

describe.each(Object.keys(SERVE_BINARIES) as (keyof typeof SERVE_BINARIES)[])(
  '%s (stdio) whose client closes its stdout or stderr',
  (binary) => {
    let serve: ReturnType<typeof spawnServe> | undefined
    afterEach(() => {
      serve?.kill()
      serve = undefined
    })

    test('stdout closed: it stops as when stdin ends (upstream stopped, log whole, exit 0) at the first answer it cannot write', async () => {
      const sessionFile = join(dir, `stdout-${binary.replace(' ', '-')}.jsonl`)
      const noisy = noisyFixture(`stdout-${binary.replace(' ', '-')}`, 0, 0)
      serve = spawnServe(['--upstream', `up=${noisy.commandLine}`, '--session', sessionFile], binary)
      await serve.initialize()
      const upstream = await readPid(`${noisy.go}.pid`)
      serve.child.stdout.destroy()
      serve.send({
        jsonrpc: '2.0',
        id: 2,
        method: 'tools/call',
        params: {
          name: 'run_code',
          arguments: { code: 'return await tools["up.echo"]({ text: "unheard" })', description: 'echo' },
        },
      })
      // Before: killed by the EPIPE (exit 1), the upstream left running.
      expect(await serve.exited).toEqual({ code: 0, signal: null })
      expect(serve.stderr()).toMatch(
        /ptc serve: stopping: stdout failed \(write EPIPE\), so no answer can reach the client/,
      )
      await until(() => !alive(upstream), 10_000)
      const log = await readJsonlSession(sessionFile)
      expect(log.partialTail).toBeUndefined()
      expect(log.events.map((event) => event.type)).toContain('tool/ptc-dispatch')
    }, 120_000)

    test('a message longer than the 10 MiB bound: it says so on stderr and exits 1 (upstream stopped), not silently with 0', async () => {
      const noisy = noisyFixture(`long-${binary.replace(' ', '-')}`, 0, 0)
      serve = spawnServe(['--upstream', `up=${noisy.commandLine}`], binary)
      await serve.initialize()
      const upstream = await readPid(`${noisy.go}.pid`)
      serve.send({
        jsonrpc: '2.0',
        id: 2,
        method: 'tools/call',
        params: { name: 'run_code', arguments: { code: 'return 1', description: 'x'.repeat(11 * 1024 * 1024) } },
      })
      expect(await serve.exited).toEqual({ code: 1, signal: null })
      expect(serve.stderr()).toMatch(
        /stopping: the client sent a message longer than a message may be \(ReadBuffer exceeded maximum size of 10485760 bytes\)/,
      )
      await until(() => !alive(upstream), 10_000)
    }, 120_000)

    test('stderr closed: it serves on, and an upstream that writes to stderr does not end it', async () => {
      const noisy = noisyFixture(`stderr-${binary.replace(' ', '-')}`, 0, 300_000)
      serve = spawnServe(['--upstream', `up=${noisy.commandLine}`], binary)
      await serve.initialize()
      serve.child.stderr.destroy()
      // More than a pipe holds: by the time the upstream is done, ptc serve has read and forwarded most of it.
      await writeFile(noisy.go, '')
      await until(() => existsSync(`${noisy.go}.done`), 20_000)
      serve.send({
        jsonrpc: '2.0',
        id: 2,
        method: 'tools/call',
        params: {
          name: 'run_code',
          arguments: { code: 'return await tools["up.echo"]({ text: "still here" })', description: 'echo' },
        },
      })
      await until(() => serve?.stdout().includes('"id":2') === true || serve?.child.exitCode !== null, 20_000)
      expect(serve.child.exitCode).toBe(null)
      expect(serve.stdout()).toContain('still here')
      serve.child.stdin.end()
      expect(await serve.exited).toEqual({ code: 0, signal: null })
    }, 120_000)
  },
)
