/**
 * `ptc serve` in front of a real upstream from the registry, `@modelcontextprotocol/server-everything`, run
 * with its own HTTP transports (Streamable HTTP, and the legacy HTTP+SSE one) in a child process, bound to
 * loopback by a preloaded shim (it would listen on every interface): its tools serve programs, its output
 * schemas are declared in `both` mode and its structured content reaches programs as typed values.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { createRequire } from 'node:module'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { CodeRuntime } from '@ptc/sandbox'
import { createQuickJSRuntime } from '@ptc/sandbox-quickjs'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { createPtcMcpServer } from '@ptc/mcp'
import { connectInMemory, type CallToolResult } from '@ptc/mcp/testing'

const here = dirname(fileURLToPath(import.meta.url))
const requireFromMcp = createRequire(join(resolve(here, '../..'), 'packages/mcp/package.json'))
const everything = join(
  dirname(requireFromMcp.resolve('@modelcontextprotocol/server-everything/package.json')),
  'dist/index.js',
)
const shim = join(here, 'fixtures/loopback-listen.mjs')

/** server-everything with one of its HTTP transports on a free loopback port; resolves with that port. */
function startEverything(transport: 'streamableHttp' | 'sse'): Promise<{ child: ChildProcess; port: number }> {
  const child = spawn(process.execPath, ['--import', shim, everything, transport], {
    env: { ...process.env, PORT: '0', NODE_OPTIONS: '' },
    stdio: ['ignore', 'ignore', 'pipe'],
  })
  return new Promise((resolvePort, reject) => {
    let stderr = ''
    child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
      stderr += chunk
      const port = /LOOPBACK_PORT=(\d+)/.exec(stderr)?.[1]
      if (port !== undefined) resolvePort({ child, port: Number(port) })
    })
    child.once('exit', (code) =>
      reject(new Error(`server-everything ${transport} exited (${String(code)}) before listening: ${stderr}`)),
    )
  })
}

let runtime: CodeRuntime
beforeAll(() => {
  runtime = createQuickJSRuntime({ poolSize: 1 })
})
afterAll(async () => {
  await runtime.dispose()
})

describe.each([
  ['streamable-http', 'streamableHttp', '/mcp'],
  ['sse', 'sse', '/sse'],
] as const)('server-everything over %s as an upstream', (protocol, transport, path) => {
  let upstream: { child: ChildProcess; port: number }
  beforeAll(async () => {
    upstream = await startEverything(transport)
  }, 60_000)
  afterAll(() => {
    upstream.child.kill()
  })

  test('its tools serve a program; structured content arrives typed; both mode declares its output schemas', async () => {
    await using ptc = await createPtcMcpServer({
      upstreams: [{ name: 'every', url: `http://127.0.0.1:${upstream.port}${path}`, protocol }],
      runtime,
      mode: 'both',
      discovery: false,
      onWarning: () => undefined,
    })
    const client = await connectInMemory(ptc)
    try {
      const { tools } = await client.listTools()
      const names = tools.map((t) => t.name)
      expect(names).toEqual(
        expect.arrayContaining(['run_code', 'every.echo', 'every.get-sum', 'every.get-structured-content']),
      )
      const structured = tools.find((t) => t.name === 'every.get-structured-content')
      expect(structured?.outputSchema).toMatchObject({
        type: 'object',
        properties: { temperature: { type: 'number' }, conditions: { type: 'string' }, humidity: { type: 'number' } },
      })
      const code = [
        'const [weather, sum, echo] = await Promise.all([',
        '  tools["every.get-structured-content"]({ location: "Chicago" }),',
        '  tools["every.get-sum"]({ a: 2, b: 3 }),',
        '  tools["every.echo"]({ message: "through ptc" }),',
        '])',
        'return { temperature: weather.temperature, sum, echo }',
      ].join('\n')
      const result = (await client.callTool({
        name: 'run_code',
        arguments: { code, description: 'server-everything' },
      })) as CallToolResult
      expect(result.isError).not.toBe(true)
      expect(result.structuredContent).toEqual({
        logs: [],
        result: { temperature: 36, sum: expect.stringContaining('5') as unknown, echo: 'Echo: through ptc' },
      })
      // A direct call in both mode returns the upstream's own structured content, which the SDK client validates.
      const direct = (await client.callTool({
        name: 'every.get-structured-content',
        arguments: { location: 'New York' },
      })) as CallToolResult
      expect(direct.structuredContent).toEqual({ temperature: 33, conditions: 'Cloudy', humidity: 82 })
    } finally {
      await client.close()
    }
  }, 60_000)
})
