import { randomUUID } from 'node:crypto'
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo, Socket } from 'node:net'
import type { Server } from '@modelcontextprotocol/sdk/server/index.js'
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js'
import { isInitializeRequest, isJSONRPCRequest, JSONRPCMessageSchema } from '@modelcontextprotocol/sdk/types.js'
import type { PtcMcpServer } from '../ptc-mcp-server.js'
import { generateToken } from './auth.js'
import { parseJson, readBody } from './body.js'
import { corsHeaders, requestAdmission, type RequestAdmission } from './admission.js'
import { allowedHostKeys, allowedOrigins } from './names.js'
import { resolveHttpOptions, type HttpServeOptions } from './options.js'
import { JSONRPC_ERROR, refusal, refuse, type Refusal } from './reply.js'
import { McpSessionTable } from './sessions.js'

/** Counts of what an endpoint holds (tests and monitoring). */
export interface HttpEndpointStats {
  /** Live sessions. */
  readonly sessions: number
  /** Initializes that passed every check and are becoming sessions. */
  readonly initializing: number
  /** Protocol servers created so far: one per initialize that passed every check, none for a refused request. */
  readonly serversCreated: number
  /** Protocol servers (with their transports) not closed yet. */
  readonly serversLive: number
  /** Open connections. */
  readonly connections: number
  /** Connections closed as soon as they were accepted, `maxConnections` being open. */
  readonly connectionsRefused: number
}

/** A listening Streamable HTTP endpoint. */
export interface HttpEndpoint extends AsyncDisposable {
  /** `http://host:port/mcp` */
  readonly url: string
  /** The bearer token clients send (`Authorization: Bearer <token>`); `undefined` when authentication is off. */
  readonly token: string | undefined
  stats(): HttpEndpointStats
  /** Close every session and the listener (open connections included). */
  close(): Promise<void>
}

interface Session {
  readonly transport: StreamableHTTPServerTransport
  close(): Promise<void>
}

const METHODS = 'GET, POST, DELETE'

/**
 * Serve `ptc` over MCP Streamable HTTP at `/mcp`, one protocol server per
 * session. Every request must name an allowed `Host`, carry no `Origin` or an
 * allowed one, and carry the bearer token; bodies are limited; a protocol
 * server is created only for a well-formed initialize that passed all of
 * that, within the session cap; idle sessions expire.
 * @throws McpServeUsageError on bad options (e.g. `token: false` on a non-loopback host)
 */
export async function listenHttp(ptc: PtcMcpServer, options: HttpServeOptions): Promise<HttpEndpoint> {
  const config = resolveHttpOptions(options)
  const token = config.token === undefined ? generateToken() : config.token
  const sessions = new McpSessionTable<Session>({ idleMs: config.sessionIdleMs, max: config.maxSessions })
  const servers = new Set<Server>()
  let serversCreated = 0
  let closing = false
  let admission: RequestAdmission | undefined = undefined // set once listening (the allowed Host names need the port)

  const listener = (req: IncomingMessage, res: ServerResponse): void => {
    handle(req, res).catch((error: unknown) => {
      options.onError?.(`HTTP request failed: ${error instanceof Error ? error.message : String(error)}`)
      refuse(req, res, refusal(500, JSONRPC_ERROR.internalError, 'Internal error'))
    })
  }
  const http = createServer(
    {
      headersTimeout: config.headersTimeoutMs,
      requestTimeout: config.requestReadTimeoutMs,
      // How often Node looks for connections past those timeouts (its default, 30 s, would let one live 3x the
      // headers timeout).
      connectionsCheckingInterval: Math.min(1000, config.headersTimeoutMs),
    },
    listener,
  )
  http.maxConnections = config.maxConnections
  const sockets = new Set<Socket>()
  let connectionsRefused = 0
  let refusalsWarned = 0
  http.on('connection', (socket: Socket) => {
    sockets.add(socket)
    socket.once('close', () => sockets.delete(socket))
  })
  http.on('drop', () => {
    connectionsRefused++
    // Said once per burst of refusals (the first after every 10 s without one being said), not once per connection.
    const now = Date.now()
    if (now - refusalsWarned >= 10_000)
      options.onError?.(`refused a connection: ${config.maxConnections} are open (maxConnections)`)
    refusalsWarned = now
  })
  // `Expect: 100-continue` is answered by `readMessage`, not before the checks.
  http.on('checkContinue', listener)

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const answer = await route(req, res)
    if (answer !== undefined) refuse(req, res, answer)
  }

  /** Answer `req` (or return the refusal to write). */
  async function route(req: IncomingMessage, res: ServerResponse): Promise<Refusal | undefined> {
    if (closing || admission === undefined)
      return refusal(503, JSONRPC_ERROR.refused, 'Service Unavailable: shutting down', { 'retry-after': '1' })
    const place = admission.place(req)
    if ('status' in place) return place
    if (place.origin !== undefined) {
      const preflight = req.method === 'OPTIONS'
      for (const [name, value] of Object.entries(corsHeaders(place.origin, preflight))) res.setHeader(name, value)
      if (preflight) return void res.writeHead(204).end()
    }
    const unauthorized = admission.credentials(req)
    if (unauthorized !== undefined) return unauthorized
    if (new URL(req.url ?? '/', 'http://x').pathname !== '/mcp')
      return refusal(404, JSONRPC_ERROR.refused, 'Not Found: the MCP endpoint is /mcp')
    if (req.method !== 'GET' && req.method !== 'POST' && req.method !== 'DELETE')
      return refusal(405, JSONRPC_ERROR.refused, 'Method Not Allowed', { allow: METHODS })
    const id = req.headers['mcp-session-id']
    if (Array.isArray(id)) return refusal(400, JSONRPC_ERROR.invalidRequest, 'Bad Request: one Mcp-Session-Id header')
    if (id !== undefined) {
      const session = sessions.get(id)
      // Open from here (it holds the session) until its response closes.
      if (session === undefined || !sessions.track(id, res))
        return refusal(404, JSONRPC_ERROR.sessionNotFound, 'Session not found')
      let body: unknown
      if (req.method === 'POST') {
        const read = await readMessage(req, res)
        if ('refusal' in read) return read.refusal
        if (!isJsonRpcBody(read.value))
          return refusal(
            400,
            JSONRPC_ERROR.invalidRequest,
            'Invalid Request: the body must be a JSON-RPC 2.0 message or a non-empty array of them',
          )
        body = read.value
      }
      if (body !== undefined) cancelOnDisconnect(session.transport, res, body)
      // A session closed meanwhile (DELETE, shutdown) answers 404 itself.
      await session.transport.handleRequest(req, res, body)
      return undefined
    }
    if (req.method !== 'POST')
      return refusal(400, JSONRPC_ERROR.invalidRequest, 'Bad Request: Mcp-Session-Id header is required')
    const accept = req.headers.accept ?? ''
    if (!accept.includes('application/json') || !accept.includes('text/event-stream'))
      return refusal(
        406,
        JSONRPC_ERROR.refused,
        'Not Acceptable: Accept must list application/json and text/event-stream',
      )
    const read = await readMessage(req, res)
    if ('refusal' in read) return read.refusal
    if (!isInitializeRequest(read.value))
      return refusal(400, JSONRPC_ERROR.invalidRequest, 'Bad Request: no session; send an initialize request first')
    if (!sessions.reserve())
      return refusal(503, JSONRPC_ERROR.refused, 'Service Unavailable: too many sessions', {
        'retry-after': String(sessions.retryAfterSeconds()),
      })
    await initialize(req, res, read.value)
    return undefined
  }

  /**
   * A POST body as JSON: 415 for another content type, 413 past the limit, 400
   * / -32700 when malformed. A client waiting for `100 Continue` gets it only
   * here, after every earlier check and the `Content-Length` one.
   */
  async function readMessage(
    req: IncomingMessage,
    res: ServerResponse,
  ): Promise<{ value: unknown } | { refusal: Refusal }> {
    const type = (req.headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase()
    if (type !== 'application/json')
      return {
        refusal: refusal(415, JSONRPC_ERROR.refused, 'Unsupported Media Type: Content-Type must be application/json'),
      }
    const body = await readBody(req, config.maxBodyBytes, () => {
      if (req.headers.expect?.toLowerCase() === '100-continue') res.writeContinue()
    })
    if (body.kind === 'too-large')
      return {
        refusal: refusal(
          413,
          JSONRPC_ERROR.refused,
          `Payload Too Large: the body must not exceed ${config.maxBodyBytes} bytes`,
        ),
      }
    if (body.kind === 'aborted')
      return { refusal: refusal(400, JSONRPC_ERROR.refused, 'Bad Request: the request was aborted') }
    const json = parseJson(body.text)
    return json.ok
      ? { value: json.value }
      : { refusal: refusal(400, JSONRPC_ERROR.parseError, 'Parse error: invalid JSON') }
  }

  /** Called with a reserved slot: create the session's transport and server and let the SDK answer the initialize. */
  async function initialize(req: IncomingMessage, res: ServerResponse, message: unknown): Promise<void> {
    let sessionId: string | undefined
    let server: Server | undefined
    const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
      sessionIdGenerator: randomUUID,
      onsessioninitialized: (id) => {
        sessionId = id
        sessions.add(id, session, res)
      },
    })
    const session: Session = { transport, close: () => transport.close() }
    transport.onclose = () => {
      if (sessionId !== undefined) sessions.delete(sessionId)
      if (server !== undefined) servers.delete(server)
    }
    try {
      serversCreated++
      server = await ptc.connect(transport)
      servers.add(server)
      await transport.handleRequest(req, res, message)
    } finally {
      if (sessionId === undefined) {
        sessions.release()
        await transport.close().catch(() => undefined)
      }
    }
  }

  await new Promise<void>((resolve, reject) => {
    http.once('error', reject)
    http.listen(options.port, config.host, () => {
      http.off('error', reject)
      resolve()
    })
  })
  const address = http.address() as AddressInfo
  admission = requestAdmission({
    hosts: allowedHostKeys({
      host: config.host,
      address: address.address,
      port: address.port,
      extra: config.allowHosts,
    }),
    origins: allowedOrigins(address.port, config.allowOrigins),
    token,
  })

  let closed: Promise<void> | undefined
  const close = (): Promise<void> =>
    (closed ??= (async () => {
      closing = true
      await sessions.closeAll()
      await Promise.all([...servers].map((s) => s.close().catch(() => undefined)))
      const done = new Promise<void>((resolve) => http.close(() => resolve()))
      http.closeAllConnections()
      await done
      // Every socket still in the set has yet to emit 'close' (which takes it out).
      await Promise.all([...sockets].map((socket) => new Promise((resolve) => socket.once('close', resolve))))
    })())
  const host = config.host.includes(':') && !config.host.startsWith('[') ? `[${config.host}]` : config.host
  return {
    url: `http://${host}:${address.port}/mcp`,
    token: token === false ? undefined : token,
    stats: () => ({
      sessions: sessions.size,
      initializing: sessions.reserved,
      serversCreated,
      serversLive: servers.size,
      connections: sockets.size,
      connectionsRefused,
    }),
    close,
    [Symbol.asyncDispose]: close,
  }
}

/**
 * A client that closes a POST's response before it is complete has given up on the requests in it: each is
 * cancelled as if the client had sent `notifications/cancelled` for it, so a `run_code` stops instead of
 * spending CPU and tools for nobody. (The 2026-07-28 revision of the protocol makes closing the stream the
 * cancellation; before it, a client could resume the stream, but only from a server that keeps an event store,
 * which this endpoint does not: the answer could never reach it.)
 */
function cancelOnDisconnect(transport: StreamableHTTPServerTransport, res: ServerResponse, body: unknown): void {
  const ids = (Array.isArray(body) ? body : [body]).flatMap((message) =>
    isJSONRPCRequest(message) ? [message.id] : [],
  )
  if (ids.length === 0) return
  res.once('close', () => {
    if (res.writableFinished) return
    for (const requestId of ids) {
      transport.onmessage?.({
        jsonrpc: '2.0',
        method: 'notifications/cancelled',
        params: { requestId, reason: 'the client closed the connection before the answer' },
      })
    }
  })
}

/**
 * Whether a parsed body is a JSON-RPC 2.0 message or a non-empty batch of them: anything else is an Invalid
 * Request (-32600), which the SDK would answer as a parse error (-32700) or, for an empty batch, accept.
 */
function isJsonRpcBody(value: unknown): boolean {
  const messages = Array.isArray(value) ? value : [value]
  return messages.length > 0 && messages.every((message) => JSONRPCMessageSchema.safeParse(message).success)
}
