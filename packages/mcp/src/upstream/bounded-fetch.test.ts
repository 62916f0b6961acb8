import { describe, expect, test } from 'vitest'
import { UpstreamFetch, type OversizedAnswer } from './bounded-fetch.js'

/** A fetch whose response carries `chunks` as its body, with `contentType`. */
function serving(
  chunks: readonly string[],
  contentType: string,
  status = 200,
): (url: string | URL, init?: RequestInit) => Promise<Response> {
  return () => {
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        for (const chunk of chunks) controller.enqueue(new TextEncoder().encode(chunk))
        controller.close()
      },
    })
    return Promise.resolve(new Response(body, { status, headers: { 'content-type': contentType } }))
  }
}

async function read(
  chunks: readonly string[],
  contentType: string,
  maxBytes: number,
  init?: RequestInit,
): Promise<{ text?: string; oversized: OversizedAnswer[] }> {
  const oversized: OversizedAnswer[] = []
  const response = await new UpstreamFetch(
    maxBytes,
    (answer) => oversized.push(answer),
    serving(chunks, contentType),
  ).fetch('http://127.0.0.1/mcp', init)
  try {
    return { text: await response.text(), oversized }
  } catch {
    return { oversized }
  }
}

/** Every way to cut `text` in three chunks. */
function cuts(text: string): string[][] {
  const all: string[][] = []
  for (let i = 0; i <= text.length; i++)
    for (let j = i; j <= text.length; j++) all.push([text.slice(0, i), text.slice(i, j), text.slice(j)])
  return all
}

describe('UpstreamFetch', () => {
  test('a JSON answer is bounded in all, and the failure names the request it answered', async () => {
    const post = { method: 'POST', body: JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: {} }) }
    expect(await read(['12345', '67890'], 'application/json', 10, post)).toEqual({ text: '1234567890', oversized: [] })
    expect(await read(['12345', '678901'], 'application/json', 10, post)).toEqual({
      oversized: [
        { requestId: 7, message: 'its answer went past 10 bytes (maxMessageBytes) and was not read further' },
      ],
    })
    // A notification's POST, or a GET, answers no request.
    expect((await read(['x'.repeat(11)], 'application/json', 10, { method: 'GET' })).oversized).toEqual([
      { message: 'its answer went past 10 bytes (maxMessageBytes) and was not read further' },
    ])
  })

  test('an event stream is bounded per event, however its events and line ends fall across the chunks', async () => {
    // Each event counts its line and that line's end (`counted` bytes), then the empty line that ends it.
    for (const end of ['\n', '\r', '\r\n']) {
      const event = (data: string, counted: number): string =>
        `data: ${data}`.padEnd(counted - end.length, 'z') + end + end
      const three = event('a', 10) + event('b', 10) + event('c', 10)
      for (const chunks of cuts(three)) {
        expect(await read(chunks, 'text/event-stream', 10)).toEqual({ text: three, oversized: [] })
      }
      // One more byte in the middle event goes past the bound, wherever the chunks are cut.
      const over = event('a', 10) + event('b', 11) + event('c', 10)
      for (const chunks of cuts(over)) {
        const { oversized } = await read(chunks, 'text/event-stream', 10)
        expect(oversized).toEqual([
          { message: 'one event of its event stream went past 10 bytes (maxMessageBytes) and was not read further' },
        ])
      }
    }
  })

  test('an event of many short lines is one event', async () => {
    const lines = 'data: 1\n'.repeat(20) + '\n'
    expect((await read([lines], 'text/event-stream', 100)).oversized).toHaveLength(1)
    expect((await read([lines], 'text/event-stream', 200)).oversized).toHaveLength(0)
  })

  test('a redirect is returned as it came, for the SDK to follow or refuse', async () => {
    const oversized: OversizedAnswer[] = []
    const response = await new UpstreamFetch(
      1,
      (answer) => oversized.push(answer),
      serving(['x'.repeat(100)], 'text/plain', 307),
    ).fetch('http://127.0.0.1/mcp')
    expect(await response.text()).toBe('x'.repeat(100))
    expect(oversized).toEqual([])
  })
})

describe('redirects', () => {
  /** A base fetch that answers each URL from `routes` (a redirect's status and location, or 200) and records what it was sent. */
  function routed(
    routes: Record<string, readonly [number, string?]>,
    sent: { url: string; method: string; body: unknown }[],
  ): (url: string | URL, init?: RequestInit) => Promise<Response> {
    return (url, init) => {
      sent.push({ url: String(url), method: init?.method ?? 'GET', body: init?.body })
      expect(init?.redirect).toBe('manual')
      const [status, location] = routes[String(url)] ?? [404]
      return Promise.resolve(
        new Response(status === 200 ? '{}' : null, { status, headers: location === undefined ? {} : { location } }),
      )
    }
  }

  test('a 303, and a 301 or 302 answering a POST, are followed with a GET and no body; a 307 or 308 keeps both', async () => {
    for (const [status, method] of [
      [303, 'GET'],
      [301, 'GET'],
      [302, 'GET'],
      [307, 'POST'],
      [308, 'POST'],
    ] as const) {
      const sent: { url: string; method: string; body: unknown }[] = []
      const upstream = new UpstreamFetch(
        1024,
        () => undefined,
        routed({ 'http://127.0.0.1/mcp': [status, '/next'], 'http://127.0.0.1/next': [200] }, sent),
      )
      const response = await upstream.fetch('http://127.0.0.1/mcp', {
        method: 'POST',
        body: '{"jsonrpc":"2.0","method":"ping","id":1}',
      })
      expect(response.status).toBe(200)
      expect(sent.map((s) => [s.url, s.method, s.body === undefined])).toEqual([
        ['http://127.0.0.1/mcp', 'POST', false],
        ['http://127.0.0.1/next', method, method === 'GET'],
      ])
    }
  })

  test('another origin (another port, another name for the host) is refused before anything is sent there', async () => {
    for (const location of ['http://127.0.0.1:8080/mcp', 'http://localhost/mcp', 'https://127.0.0.1/mcp']) {
      const sent: { url: string; method: string; body: unknown }[] = []
      const upstream = new UpstreamFetch(
        1024,
        () => undefined,
        routed({ 'http://127.0.0.1/mcp': [307, location] }, sent),
      )
      await expect(upstream.fetch('http://127.0.0.1/mcp', { method: 'POST', body: '{}' })).rejects.toThrow(
        `it redirected to another origin (${new URL(location).origin})`,
      )
      expect(sent).toHaveLength(1)
    }
  })
})
