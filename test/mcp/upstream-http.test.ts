/**
 * Upstreams served over real HTTP on a loopback port (the fixture server behind the MCP SDK's own server
 * transports): Streamable HTTP and the legacy HTTP+SSE transport, with the headers an upstream requires.
 */
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { CodeRuntime } from '@ptc/sandbox'
import { createQuickJSRuntime } from '@ptc/sandbox-quickjs'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import {
  createPtcMcpServer,
  McpServeUsageError,
  parseServeArgs,
  UpstreamUnavailableError,
  type UpstreamSpec,
} from '@ptc/mcp'
import { connectInMemory, serveFixtureOverHttp, type CallToolResult } from '@ptc/mcp/testing'

let runtime: CodeRuntime
beforeAll(() => {
  runtime = createQuickJSRuntime({ poolSize: 1 })
})
afterAll(async () => {
  await runtime.dispose()
})

const TOKEN = ['authorization', 'Bearer upstream-secret-1234'] as const

/** Serve with one upstream and run a program that calls two of its tools. */
async function addThroughPtc(upstream: UpstreamSpec): Promise<CallToolResult> {
  await using ptc = await createPtcMcpServer({ upstreams: [upstream], runtime, onWarning: () => undefined })
  const client = await connectInMemory(ptc)
  try {
    return (await client.callTool({
      name: 'run_code',
      arguments: {
        code: 'const r = await tools["web.add"]({ a: 2, b: 5 }); return [r.sum, await tools["web.echo"]({ text: "over http" })]',
        description: 'http upstream',
      },
    })) as CallToolResult
  } finally {
    await client.close()
  }
}

describe.each(['streamable-http', 'sse'] as const)('an upstream over %s', (protocol) => {
  test('is reached at its URL with the headers it requires, and its tools serve programs', async () => {
    await using upstream = await serveFixtureOverHttp({ protocol, requireHeader: TOKEN })
    const result = await addThroughPtc({ name: 'web', url: upstream.url, headers: { [TOKEN[0]]: TOKEN[1] } })
    expect(result.structuredContent).toEqual({ logs: [], result: [7, 'over http'] })
    expect(upstream.refused).toBe(0)
  })

  test('without the header it refuses, and the start fails naming the upstream', async () => {
    await using upstream = await serveFixtureOverHttp({ protocol, requireHeader: TOKEN })
    const error = await addThroughPtc({ name: 'web', url: upstream.url }).then(
      () => undefined,
      (e: unknown) => e,
    )
    expect(error).toBeInstanceOf(UpstreamUnavailableError)
    expect((error as Error).message).toMatch(/^upstream web could not be connected: /)
    // Refused over Streamable HTTP too, the legacy transport tried after it: its answer is the one that says why.
    if (protocol === 'streamable-http')
      expect((error as Error).message).toMatch(
        /could not be connected: Streamable HTTP was refused \(HTTP 401: .*\), and so was the legacy HTTP\+SSE transport \(/,
      )
    expect(upstream.refused).toBeGreaterThan(0)
  })
})

test("protocol 'sse' goes straight to the legacy transport", async () => {
  await using upstream = await serveFixtureOverHttp({ protocol: 'sse' })
  const result = await addThroughPtc({ name: 'web', url: upstream.url, protocol: 'sse' })
  expect(result.structuredContent).toEqual({ logs: [], result: [7, 'over http'] })
})

describe('ptc serve arguments for URL upstreams', () => {
  test('--upstream takes a URL, and --upstream-header adds headers to the upstream of that name', () => {
    const args = parseServeArgs([
      '--upstream',
      'web=https://mcp.example/mcp',
      '--upstream-header',
      'web=Authorization: Bearer abc',
      '--upstream-header',
      'web=X-Team:  blue ',
      '--upstream',
      'fs=npx server /tmp',
    ])
    expect(args.upstreams).toEqual([
      { name: 'web', url: 'https://mcp.example/mcp', headers: { Authorization: 'Bearer abc', 'X-Team': 'blue' } },
      { name: 'fs', command: 'npx', args: ['server', '/tmp'] },
    ])
  })

  test.each([
    [['--upstream', 'web=https://mcp.example/mcp extra'], /a URL upstream takes no arguments/],
    [
      ['--upstream', 'web=https://mcp.example/mcp', '--upstream-header', 'nope=Authorization: x'],
      /no URL --upstream is named nope/,
    ],
    [['--upstream', 'fs=npx server', '--upstream-header', 'fs=Authorization: x'], /no URL --upstream is named fs/],
    [['--upstream', 'web=https://mcp.example/mcp', '--upstream-header', 'web=no colon'], /must be name=Header: value/],
    [
      ['--upstream', 'web=https://mcp.example/mcp', '--upstream-header', 'web=Bad Header: x'],
      /must be name=Header: value/,
    ],
    [
      ['--upstream', 'web=https://mcp.example/mcp', '--upstream-header', 'web=X-A: one\r\nX-B: two'],
      /the value of X-A holds a control character/,
    ],
  ])('%j is refused: %s', (argv, message) => {
    expect(() => parseServeArgs(argv)).toThrow(McpServeUsageError)
    expect(() => parseServeArgs(argv)).toThrow(message)
  })
})

describe('redirects', () => {
  test('within the upstream origin they are followed (a 307 keeps the POST and its headers)', async () => {
    await using upstream = await serveFixtureOverHttp({
      protocol: 'streamable-http',
      requireHeader: TOKEN,
      redirect: { status: 307, from: { '/old': '/moved', '/moved': '/mcp' } },
    })
    const result = await addThroughPtc({
      name: 'web',
      url: upstream.url.replace(/\/mcp$/, '/old'),
      headers: { [TOKEN[0]]: TOKEN[1] },
    })
    expect(result.structuredContent).toEqual({ logs: [], result: [7, 'over http'] })
  })

  test('to another origin they are not followed: the headers given for the upstream never reach it', async () => {
    const seen: (string | undefined)[] = []
    const elsewhere = createServer((req, res) => {
      seen.push(req.headers['x-api-key'] as string | undefined)
      res.writeHead(500).end()
    })
    await new Promise<void>((resolve) => elsewhere.listen(0, '127.0.0.1', resolve))
    try {
      const target = `http://127.0.0.1:${(elsewhere.address() as AddressInfo).port}/mcp`
      await using upstream = await serveFixtureOverHttp({
        protocol: 'streamable-http',
        redirect: { status: 307, from: { '/mcp': target } },
      })
      const error = await addThroughPtc({
        name: 'web',
        url: upstream.url,
        headers: { 'X-Api-Key': 'upstream-secret' },
      }).then(
        () => undefined,
        (e: unknown) => e,
      )
      expect(error).toBeInstanceOf(UpstreamUnavailableError)
      expect((error as Error).message).toContain(
        `it redirected to another origin (${new URL(target).origin}), which was not followed`,
      )
      // Before: fetch followed it with every header but Authorization.
      expect(seen).toEqual([])
    } finally {
      elsewhere.closeAllConnections()
      await new Promise<void>((resolve) => elsewhere.close(() => resolve()))
    }
  })

  test('more than MAX_REDIRECTS in a row fail', async () => {
    await using upstream = await serveFixtureOverHttp({
      protocol: 'streamable-http',
      redirect: { status: 308, from: { '/mcp': '/loop', '/loop': '/mcp' } },
    })
    const error = await addThroughPtc({ name: 'web', url: upstream.url }).then(
      () => undefined,
      (e: unknown) => e,
    )
    expect((error as Error).message).toContain('it redirected more than 5 times')
  })
})
