import { randomUUID } from 'node:crypto'
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js'
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js'
import type { PtcMcpServer } from './ptc-mcp-server.js'

/** A listening Streamable HTTP endpoint. */
export interface HttpEndpoint extends AsyncDisposable {
  /** `http://host:port/mcp` */
  readonly url: string
  close(): Promise<void>
}

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '::1'])

/**
 * Serve `ptc` over MCP Streamable HTTP at `/mcp` (one protocol server per
 * session). On a loopback host, requests naming another `Host` are refused
 * (DNS-rebinding protection).
 */
export async function listenHttp(ptc: PtcMcpServer, options: { port: number; host?: string }): Promise<HttpEndpoint> {
  const host = options.host ?? '127.0.0.1'
  const sessions = new Map<string, StreamableHTTPServerTransport>()
  let allowedHosts: string[] | undefined
  const http = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'application/json' })
      res.end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32603, message: error instanceof Error ? error.message : String(error) }, id: null }))
    })
  })
  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (new URL(req.url ?? '/', 'http://x').pathname !== '/mcp') return void res.writeHead(404).end()
    const id = req.headers['mcp-session-id']
    const existing = typeof id === 'string' ? sessions.get(id) : undefined
    if (existing !== undefined) return existing.handleRequest(req, res)
    if (req.method !== 'POST') return void res.writeHead(400).end('no MCP session')
    const body = await readJson(req)
    if (!isInitializeRequest(body)) return void res.writeHead(400).end('no MCP session: send initialize first')
    const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (sessionId) => void sessions.set(sessionId, transport),
      ...(allowedHosts !== undefined && { enableDnsRebindingProtection: true, allowedHosts }),
    })
    transport.onclose = () => {
      if (transport.sessionId !== undefined) sessions.delete(transport.sessionId)
    }
    await ptc.connect(transport)
    await transport.handleRequest(req, res, body)
  }
  await new Promise<void>((resolve, reject) => {
    http.once('error', reject)
    http.listen(options.port, host, () => resolve())
  })
  const port = (http.address() as AddressInfo).port
  if (LOOPBACK.has(host)) allowedHosts = [...LOOPBACK].flatMap((h) => [h, `${h}:${port}`, `[${h}]:${port}`])
  const close = async (): Promise<void> => {
    await Promise.all([...sessions.values()].map((t) => t.close().catch(() => undefined)))
    await new Promise<void>((resolve) => http.close(() => resolve()))
  }
  return { url: `http://${host.includes(':') ? `[${host}]` : host}:${port}/mcp`, close, [Symbol.asyncDispose]: close }
}

async function readJson(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = []
  let size = 0
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length
    if (size > 4 * 1024 * 1024) throw new Error('request body too large')
    chunks.push(chunk)
  }
  return JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown
}
