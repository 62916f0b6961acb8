/**
 * What ptc serve reads from an upstream is bounded per message (`maxUpstreamMessageBytes`) on every transport. The
 * MCP SDK's HTTP transports read a whole answer, and a whole server-sent event, into memory: an upstream answering
 * a call with an endless body grew the host by 120 MiB a second, and the body was still read after the call had
 * timed out. Here: real upstreams on loopback, the SDK's own servers (the fixture) and hand-written hostile ones.
 */
import { once } from 'node:events'
import { existsSync, mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { createServer, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { CodeRuntime } from '@ptc/sandbox'
import { createQuickJSRuntime } from '@ptc/sandbox-quickjs'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { createPtcMcpServer, McpServeUsageError, parseServeArgs, UpstreamConnection, type UpstreamSpec } from '@ptc/mcp'
import { connectInMemory, serveFixtureOverHttp, type CallToolResult } from '@ptc/mcp/testing'

let runtime: CodeRuntime
beforeAll(() => {
  runtime = createQuickJSRuntime({ poolSize: 1 })
})
afterAll(async () => {
  await runtime.dispose()
})

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..')
/** The fixture server over stdio, spawned by ptc serve as any command upstream. */
const stdioFixture: UpstreamSpec = {
  name: 'up',
  command: process.execPath,
  args: ['--conditions=@ptc/source', '--import', 'tsx', join(root, 'packages/mcp/src/testing/fixture-server.ts')],
  cwd: root,
}

/** A program that asks for a long echo, then a short one: what the first failed with, and the second's answer. */
const LONG_THEN_SHORT = `
let failed = 'no failure'
try { await tools["up.echo"]({ text: "x".repeat(20000) }) } catch (error) { failed = error.message }
return [failed, await tools["up.echo"]({ text: "short" })]`

async function runThroughPtc(upstream: UpstreamSpec, code: string, warnings: string[]): Promise<CallToolResult> {
  await using ptc = await createPtcMcpServer({
    upstreams: [upstream],
    runtime,
    maxUpstreamMessageBytes: 4096,
    onWarning: (m) => warnings.push(m),
  })
  const client = await connectInMemory(ptc)
  try {
    return (await client.callTool({
      name: 'run_code',
      arguments: { code, description: 'bounded upstream' },
    })) as CallToolResult
  } finally {
    await client.close()
  }
}

describe('an answer longer than maxUpstreamMessageBytes fails its call, and the upstream serves on', () => {
  test('Streamable HTTP (the answer is one event of the POST stream): only that call fails', async () => {
    await using upstream = await serveFixtureOverHttp({ protocol: 'streamable-http' })
    const warnings: string[] = []
    const result = await runThroughPtc({ name: 'up', url: upstream.url }, LONG_THEN_SHORT, warnings)
    expect(result.structuredContent).toEqual({
      logs: [],
      result: [
        'upstream up: MCP error -32603: one event of its event stream went past 4096 bytes (maxMessageBytes) and was not read further',
        'short',
      ],
    })
    expect(warnings.filter((warning) => warning.includes('disconnected'))).toEqual([])
  })

  test('legacy HTTP+SSE (every answer comes on one event stream): the connection is reset and re-established', async () => {
    await using upstream = await serveFixtureOverHttp({ protocol: 'sse' })
    const warnings: string[] = []
    const result = await runThroughPtc({ name: 'up', url: upstream.url, protocol: 'sse' }, LONG_THEN_SHORT, warnings)
    const reason = 'one event of its event stream went past 4096 bytes (maxMessageBytes) and was not read further'
    expect(result.structuredContent).toEqual({
      logs: [],
      result: [`upstream up: the connection was reset: ${reason}`, 'short'],
    })
    expect(warnings).toContain(`upstream up disconnected (reset: ${reason}); in-flight calls failed; reconnecting`)
  })

  test('stdio (a line of its output): the connection is reset and re-established', async () => {
    const warnings: string[] = []
    const result = await runThroughPtc(stdioFixture, LONG_THEN_SHORT, warnings)
    const reason = 'a line of its output went past 4096 bytes (maxMessageBytes)'
    expect(result.structuredContent).toEqual({
      logs: [],
      result: [`upstream up: the connection was reset: ${reason}`, 'short'],
    })
    expect(warnings).toContain(`upstream up disconnected (reset: ${reason}); in-flight calls failed; reconnecting`)
  }, 30_000)
})

/**
 * What a hostile upstream does when called: never ends its answer, writing 1 MiB chunks as fast as the client
 * reads them, as JSON or as one server-sent event; or (`trickle`) writes a space to an event stream every 50 ms;
 * or (`linger`) answers the call in an event, then keeps the stream open, writing a comment every 50 ms.
 */
type Flood = 'json' | 'event' | 'trickle' | 'linger'

/**
 * A hand-written Streamable HTTP upstream with one tool, `flood`, whose answer never ends. It counts the answers
 * it was writing when the client closed their connection.
 */
async function floodingUpstream(
  flood: Flood,
): Promise<{ url: string; closedWhileFlooding: () => number } & AsyncDisposable> {
  let closed = 0
  const chunk = Buffer.alloc(1 << 20, 'x')
  const reply = (res: ServerResponse, id: unknown, result: unknown): void => {
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id, result }))
  }
  const server = createServer((req, res) => {
    let body = ''
    req.setEncoding('utf8')
    req.on('data', (text: string) => (body += text))
    req.on('end', () => {
      if (req.method !== 'POST') return void res.writeHead(405).end()
      const message = JSON.parse(body) as { id?: number; method: string; params?: { protocolVersion?: string } }
      if (message.id === undefined) return void res.writeHead(202).end()
      if (message.method === 'initialize') {
        return reply(res, message.id, {
          protocolVersion: message.params?.protocolVersion,
          capabilities: { tools: {} },
          serverInfo: { name: 'flood', version: '1' },
        })
      }
      if (message.method === 'tools/list')
        return reply(res, message.id, { tools: [{ name: 'flood', inputSchema: { type: 'object' } }] })
      if (flood === 'linger') {
        res.writeHead(200, { 'content-type': 'text/event-stream' })
        res.write(
          `event: message\ndata: {"jsonrpc":"2.0","id":${message.id},"result":{"content":[{"type":"text","text":"answered"}]}}\n\n`,
        )
        const timer = setInterval(() => res.write(': still here\n\n'), 50)
        res.on('close', () => {
          clearInterval(timer)
          closed++
        })
        return
      }
      const head = `{"jsonrpc":"2.0","id":${message.id},"result":{"content":[{"type":"text","text":"`
      res.writeHead(200, { 'content-type': flood === 'json' ? 'application/json' : 'text/event-stream' })
      res.write(flood === 'json' ? head : `event: message\ndata: ${head}`)
      let ended = false
      res.on('close', () => {
        if (!ended) closed++
        ended = true
      })
      if (flood === 'trickle') {
        const timer = setInterval(() => res.write(' '), 50)
        res.on('close', () => clearInterval(timer))
        return
      }
      const pump = (): void => {
        while (!ended && res.write(chunk));
        if (!ended) res.once('drain', pump)
      }
      pump()
    })
  })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    closedWhileFlooding: () => closed,
    async [Symbol.asyncDispose]() {
      server.closeAllConnections()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    },
  }
}

test('calls to a stdio upstream faster than its pipe takes them: no MaxListenersExceededWarning, every answer right', async () => {
  const warnings: string[] = []
  const onWarning = (warning: Error): void => void warnings.push(`${warning.name}: ${warning.message}`)
  process.on('warning', onWarning)
  const connection = new UpstreamConnection(stdioFixture, {
    maxMessageBytes: 2 ** 20,
    requestTimeoutMs: 60_000,
    onTools: () => undefined,
    onWarning: (m) => warnings.push(m),
  })
  try {
    // Each request is larger than the pipe's high-water mark: every write of one waits for a drain.
    const texts = Array.from({ length: 40 }, (_, i) => `${i}:${'x'.repeat(64 * 1024)}`)
    const answers = await Promise.all(
      texts.map((text) => connection.call('echo', { text }, new AbortController().signal)),
    )
    expect(answers.map((a) => (a.content[0] as { text: string }).text)).toEqual(texts)
    await new Promise((resolve) => setImmediate(resolve)) // a process warning is emitted on the next tick
    expect(warnings).toEqual([])
  } finally {
    process.off('warning', onWarning)
    await connection.close()
  }
}, 30_000)

test('the answer of a call that timed out or was aborted is not read on: its connection is closed', async () => {
  await using upstream = await floodingUpstream('trickle')
  // The timeout also bounds connecting: 2 s leaves a loaded machine room to initialize.
  const connection = new UpstreamConnection(
    { name: 'slow', url: upstream.url, protocol: 'streamable-http' },
    { requestTimeoutMs: 2000, onTools: () => undefined, onWarning: () => undefined },
  )
  try {
    await expect(connection.call('flood', {}, new AbortController().signal)).rejects.toThrow(
      'upstream slow: MCP error -32001: Request timed out',
    )
    await expect.poll(() => upstream.closedWhileFlooding(), { timeout: 10_000 }).toBe(1)
    const aborted = new AbortController()
    const call = connection.call('flood', {}, aborted.signal)
    setTimeout(() => aborted.abort(new Error('the run ended')), 50)
    await expect(call).rejects.toThrow()
    await expect.poll(() => upstream.closedWhileFlooding(), { timeout: 10_000 }).toBe(2)
    expect(connection.connected).toBe(true)
  } finally {
    await connection.close()
  }
})

test('an answer whose stream the upstream keeps open after answering is taken, and the stream closed after a grace', async () => {
  await using upstream = await floodingUpstream('linger')
  const connection = new UpstreamConnection(
    { name: 'slow', url: upstream.url, protocol: 'streamable-http' },
    { onTools: () => undefined, onWarning: () => undefined },
  )
  try {
    expect(await connection.call('flood', {}, new AbortController().signal)).toEqual({
      content: [{ type: 'text', text: 'answered' }],
    })
    await expect.poll(() => upstream.closedWhileFlooding(), { timeout: 10_000 }).toBe(1)
    expect(await connection.call('flood', {}, new AbortController().signal)).toEqual({
      content: [{ type: 'text', text: 'answered' }],
    })
    await expect.poll(() => upstream.closedWhileFlooding(), { timeout: 10_000 }).toBe(2)
  } finally {
    await connection.close()
  }
})

describe.each(['json', 'event'] as const)('an upstream whose answer never ends (%s)', (flood) => {
  test('fails the call once the bound is read, well before the timeout, and its connection is closed', async () => {
    await using upstream = await floodingUpstream(flood)
    const warnings: string[] = []
    const connection = new UpstreamConnection(
      { name: 'flood', url: upstream.url, protocol: 'streamable-http' },
      {
        maxMessageBytes: 2 ** 20,
        requestTimeoutMs: 60_000,
        onTools: () => undefined,
        onWarning: (m) => warnings.push(m),
      },
    )
    try {
      const what = flood === 'json' ? 'its answer' : 'one event of its event stream'
      await expect(connection.call('flood', {}, new AbortController().signal)).rejects.toThrow(
        `upstream flood: MCP error -32603: ${what} went past 1048576 bytes (maxMessageBytes) and was not read further`,
      )
      // The host stopped reading: the upstream sees its answer's connection closed (it would write on forever).
      await expect.poll(() => upstream.closedWhileFlooding(), { timeout: 10_000 }).toBe(1)
      // The connection itself is not reset by one call's answer.
      expect(connection.connected).toBe(true)
      expect(warnings).toEqual([])
    } finally {
      await connection.close()
    }
  })
})

describe('the bound is usage', () => {
  test('createPtcMcpServer, UpstreamConnection and ptc serve refuse a bound that is not a positive integer within 512 MiB', async () => {
    for (const bad of [0, 1.5, Number.NaN, 2 ** 29 + 1]) {
      await expect(createPtcMcpServer({ upstreams: [], runtime, maxUpstreamMessageBytes: bad })).rejects.toThrow(
        McpServeUsageError,
      )
    }
    const spec = { url: 'http://127.0.0.1:9/mcp' }
    const handlers = { onTools: () => undefined, onWarning: () => undefined }
    expect(() => new UpstreamConnection(spec, { ...handlers, maxMessageBytes: 0 })).toThrow(
      `maxMessageBytes must be a positive integer of at most ${2 ** 29}, not 0`,
    )
    expect(() => new UpstreamConnection(spec, { ...handlers, maxTools: 2.5 })).toThrow(
      'maxTools must be a positive integer, not 2.5',
    )
    expect(parseServeArgs(['--upstream', 'x', '--max-upstream-message-bytes', '65536']).maxUpstreamMessageBytes).toBe(
      65_536,
    )
    expect(() => parseServeArgs(['--upstream', 'x', '--max-upstream-message-bytes', '0'])).toThrow(
      '--max-upstream-message-bytes must be a positive integer, not "0"',
    )
    expect(() => parseServeArgs(['--upstream', 'x', '--max-upstream-message-bytes', String(2 ** 29 + 1)])).toThrow(
      `--max-upstream-message-bytes must be at most ${2 ** 29}`,
    )
  })
})

test('close() of a connection being made to an upstream that never answers ends it at once, not at the connect timeout', async () => {
  // A stdio upstream that reads nothing and answers nothing; the connect would wait for its timeout (a minute).
  const connection = new UpstreamConnection(
    { name: 'mute', command: process.execPath, args: ['-e', 'setInterval(() => {}, 1000)'] },
    { requestTimeoutMs: 600_000, onTools: () => undefined, onWarning: () => undefined },
  )
  // connect() has spawned the upstream by the time it returns (its initialize goes next).
  const connecting = connection.connect().then(
    () => 'connected',
    (error: unknown) => error,
  )
  await connection.close()
  expect(await connecting).toMatchObject({ message: expect.stringMatching(/^upstream mute could not be connected/) })
  expect(connection.connected).toBe(false)
})

test('a stdio upstream that closes its stdin and runs on is reset and reconnected, not left to time every call out', async () => {
  // Answers initialize and tools/list, then closes its stdin and says so in a file (the second process it is
  // started as answers calls).
  const server = `
const out = (m) => process.stdout.write(JSON.stringify(m) + '\\n')
let buffer = ''
process.stdin.on('data', (chunk) => {
  buffer += chunk
  for (let at = buffer.indexOf('\\n'); at !== -1; at = buffer.indexOf('\\n')) {
    const message = JSON.parse(buffer.slice(0, at))
    buffer = buffer.slice(at + 1)
    if (message.method === 'initialize') out({ jsonrpc: '2.0', id: message.id, result: { protocolVersion: '2025-06-18', capabilities: { tools: {} }, serverInfo: { name: 'deaf', version: '1' } } })
    if (message.method === 'tools/list') {
      out({ jsonrpc: '2.0', id: message.id, result: { tools: [{ name: 'echo', inputSchema: { type: 'object' } }] } })
      if (!require('node:fs').existsSync(process.env.MARK)) {
        require('node:fs').writeFileSync(process.env.MARK, '')
        setTimeout(() => { process.stdin.destroy(); require('node:fs').closeSync(0); require('node:fs').writeFileSync(process.env.MARK + '.closed', '') }, 10)
      }
    }
    if (message.method === 'tools/call') out({ jsonrpc: '2.0', id: message.id, result: { content: [{ type: 'text', text: 'heard' }] } })
  }
})
setInterval(() => {}, 1 << 30)`
  const mark = join(mkdtempSync(join(tmpdir(), 'ptc-deaf-')), 'closed-once')
  const warnings: string[] = []
  const connection = new UpstreamConnection(
    {
      name: 'deaf',
      command: process.execPath,
      args: ['-e', server],
      env: { ...(process.env as Record<string, string>), MARK: mark },
    },
    {
      requestTimeoutMs: 8000,
      reconnect: { initialMs: 50 },
      onTools: () => undefined,
      onWarning: (m) => warnings.push(m),
    },
  )
  try {
    await connection.connect()
    await expect.poll(() => existsSync(`${mark}.closed`), { timeout: 10_000 }).toBe(true)
    // Writes fail once the pipe is known closed: the connection is reset (the call in flight fails), then made again.
    for (let i = 0; i < 6 && !warnings.some((w) => w.includes('stdin was closed')); i++) {
      await connection.call('echo', { text: 'x'.repeat(100_000) }, new AbortController().signal).catch(() => undefined)
    }
    expect(warnings).toContainEqual(
      expect.stringMatching(
        /^upstream deaf disconnected \(reset: its stdin was closed \((EPIPE|ERR_STREAM_DESTROYED|ERR_STREAM_WRITE_AFTER_END)\): it reads no more requests\); in-flight calls failed; reconnecting$/,
      ),
    )
    expect(await connection.call('echo', {}, new AbortController().signal)).toEqual({
      content: [{ type: 'text', text: 'heard' }],
    })
  } finally {
    await connection.close()
  }
}, 90_000)
