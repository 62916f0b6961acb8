/** Shared setup of the Streamable HTTP tests: a real endpoint on a free loopback port, raw requests for hostile cases. */
import { request } from 'node:http'
import type { CodeRuntime } from '@ptc/sandbox'
import { createPtcMcpServer, listenHttp, type HttpEndpoint, type HttpServeOptions, type PtcMcpServer } from '@ptc/mcp'
import { inMemoryFixture } from '@ptc/mcp/testing'

export const INITIALIZE = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1.0.0' } },
}

export const RUN_ECHO = {
  name: 'run_code',
  arguments: { code: 'return await tools["fx.echo"]({ text: "over http" })', description: 'http' },
}

export interface Served extends AsyncDisposable {
  ptc: PtcMcpServer
  endpoint: HttpEndpoint
  /** `Authorization` header value for the endpoint's token. */
  bearer: string
  close(): Promise<void>
}

/** `createPtcMcpServer` over an in-memory fixture upstream, listening on a free port. */
export async function serve(runtime: CodeRuntime, options: Partial<HttpServeOptions> = {}): Promise<Served> {
  const ptc = await createPtcMcpServer({
    upstreams: [{ name: 'fx', transport: inMemoryFixture() }],
    runtime,
    onWarning: () => undefined,
  })
  const endpoint = await listenHttp(ptc, { port: 0, ...options })
  const close = async (): Promise<void> => {
    await endpoint.close()
    await ptc.close()
  }
  return { ptc, endpoint, bearer: `Bearer ${endpoint.token ?? ''}`, close, [Symbol.asyncDispose]: close }
}

/** Headers of a well-formed MCP POST. */
export function mcpHeaders(extra: Record<string, string> = {}): Record<string, string> {
  return { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...extra }
}

/** POST `body` (serialized unless a string) with `fetch`; the status, headers and parsed JSON body (if JSON). */
export async function post(
  url: string,
  body: unknown,
  headers: Record<string, string>,
): Promise<{ status: number; headers: Headers; json: unknown; text: string }> {
  const response = await fetch(url, {
    method: 'POST',
    headers,
    body: typeof body === 'string' ? body : JSON.stringify(body),
  })
  return read(response)
}

export async function read(
  response: Response,
): Promise<{ status: number; headers: Headers; json: unknown; text: string }> {
  const text = await response.text()
  let json: unknown
  if (response.headers.get('content-type')?.includes('application/json') === true) json = JSON.parse(text) as unknown
  return { status: response.status, headers: response.headers, json, text }
}

/** The JSON-RPC error of a refusal body. */
export function rpcError(json: unknown): { code: number; message: string } {
  const body = json as { jsonrpc?: string; error?: { code: number; message: string }; id?: unknown }
  if (body.jsonrpc !== '2.0' || body.error === undefined || body.id !== null)
    throw new Error(`not a JSON-RPC error: ${JSON.stringify(json)}`)
  return body.error
}

/**
 * A request through `node:http` (which, unlike `fetch`, lets the test forge
 * `Host`), on a fresh connection. With `expect: 100-continue` among the
 * headers the body is sent only after `100 Continue` (`continued` says whether it came).
 */
export function rawRequest(options: {
  port: number
  method?: string
  headers: Record<string, string>
  body?: string
}): Promise<{
  status: number
  headers: Record<string, string | string[] | undefined>
  text: string
  continued: boolean
}> {
  return new Promise((resolve, reject) => {
    let continued = false
    const req = request(
      {
        host: '127.0.0.1',
        port: options.port,
        path: '/mcp',
        method: options.method ?? 'POST',
        headers: options.headers,
        agent: false,
      },
      (res) => {
        let text = ''
        res.setEncoding('utf8')
        res.on('data', (chunk: string) => (text += chunk))
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text, continued }))
        res.on('error', reject)
      },
    )
    req.on('error', reject)
    if (options.headers.expect === '100-continue') {
      req.on('continue', () => {
        continued = true
        req.end(options.body)
      })
      req.flushHeaders()
    } else req.end(options.body)
  })
}

/** The session id of a successful raw initialize. */
export async function initializeRaw(url: string, bearer: string): Promise<string> {
  const response = await post(url, INITIALIZE, mcpHeaders({ authorization: bearer }))
  const id = response.headers.get('mcp-session-id')
  if (response.status !== 200 || id === null) throw new Error(`initialize failed: ${response.status} ${response.text}`)
  return id
}

/** Poll `condition` every 20 ms for up to `ms`. */
export async function until(condition: () => boolean, ms = 5000): Promise<void> {
  const end = Date.now() + ms
  while (!condition()) {
    if (Date.now() > end) throw new Error('timed out waiting')
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}
