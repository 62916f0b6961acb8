import { MAX_TIMER_MS } from '@ptc/sandbox'
import { checkBound, McpServeUsageError } from '../../errors.js'
import { isBearerToken } from './auth.js'
import { isLoopbackHost, parseAllowedHost, parseOrigin } from './names.js'

/** Options of `listenHttp`. Every limit has a default in `HTTP_DEFAULTS`. */
export interface HttpServeOptions {
  /** TCP port; 0 picks a free one (read it from `endpoint.url`). */
  readonly port: number
  /** Bind address (default `127.0.0.1`). A non-loopback address requires a token. */
  readonly host?: string
  /**
   * The bearer token every request must carry (`Authorization: Bearer <token>`):
   * at least 16 visible ASCII characters. Default: a generated one (256 random
   * bits, base64url), readable as `endpoint.token`. `false` turns authentication
   * off, which is allowed only on a loopback bind.
   */
  readonly token?: string | false
  /**
   * Origins accepted besides the loopback ones (`http://127.0.0.1:PORT`, `http://localhost:PORT`, `http://[::1]:PORT`).
   */
  readonly allowOrigins?: readonly string[]
  /** Host names (`name` or `name:port`; without a port: the bound port) accepted in `Host` besides the defaults. */
  readonly allowHosts?: readonly string[]
  /** Largest request body; a larger one is refused with 413 as soon as it passes the limit (default 1 MiB). */
  readonly maxBodyBytes?: number
  /** A session with no request open for this long is closed (default 10 minutes). */
  readonly sessionIdleMs?: number
  /** Most live sessions; an initialize past the cap gets 503 with `Retry-After` (default 100). */
  readonly maxSessions?: number
  /**
   * Most open connections, authenticated or not; a connection past it is closed as soon as it is accepted
   * (default 512). Keeps a flood of connections from taking every file descriptor of the process.
   */
  readonly maxConnections?: number
  /** A connection that has not sent a request's whole headers this long after it began one is closed (default 10 s). */
  readonly headersTimeoutMs?: number
  /**
   * A request (headers and body) not received whole this long after it began is answered 408 and its connection
   * closed (default 30 s; at least `headersTimeoutMs`). Only the reading: a response may stream for longer.
   */
  readonly requestReadTimeoutMs?: number
  /**
   * Internal errors (the client gets 500 / -32603 without details) and connections refused past `maxConnections`.
   * Default: ignored.
   */
  readonly onError?: (message: string) => void
}

/** The defaults of `listenHttp` and `ptc serve --http`, in one place. */
export const HTTP_DEFAULTS = {
  host: '127.0.0.1',
  maxBodyBytes: 1024 * 1024,
  sessionIdleMs: 10 * 60 * 1000,
  maxSessions: 100,
  maxConnections: 512,
  headersTimeoutMs: 10_000,
  requestReadTimeoutMs: 30_000,
} as const

/** `HttpServeOptions` checked and normalized (the token still `undefined` when it is to be generated). */
export interface ResolvedHttpOptions {
  readonly host: string
  readonly loopback: boolean
  readonly token: string | false | undefined
  readonly allowOrigins: readonly string[]
  readonly allowHosts: readonly { readonly hostname: string; readonly port?: number }[]
  readonly maxBodyBytes: number
  readonly sessionIdleMs: number
  readonly maxSessions: number
  readonly maxConnections: number
  readonly headersTimeoutMs: number
  readonly requestReadTimeoutMs: number
}

/** Check `options`. @throws McpServeUsageError naming the first bad option */
export function resolveHttpOptions(options: HttpServeOptions): ResolvedHttpOptions {
  const host = options.host ?? HTTP_DEFAULTS.host
  const loopback = isLoopbackHost(host)
  if (options.token === false && !loopback)
    throw new McpServeUsageError(
      `authentication can be turned off only on a loopback bind (127.0.0.1, ::1, localhost), not on ${host}`,
    )
  if (typeof options.token === 'string' && !isBearerToken(options.token))
    throw new McpServeUsageError('the token must be at least 16 visible ASCII characters (no spaces)')
  const allowOrigins = (options.allowOrigins ?? []).map((text) => {
    const origin = parseOrigin(text)
    if (origin === undefined)
      throw new McpServeUsageError(`not an http(s) origin: ${JSON.stringify(text)} (e.g. https://app.example:8443)`)
    return origin
  })
  const allowHosts = (options.allowHosts ?? []).map((text) => {
    const name = parseAllowedHost(text)
    if (name === undefined)
      throw new McpServeUsageError(`not a host name: ${JSON.stringify(text)} (e.g. mcp.example or mcp.example:8080)`)
    return name
  })
  // One given alone moves the other's default so that the headers' time fits in the request's.
  const given = {
    headers: checkBound('headersTimeoutMs', options.headersTimeoutMs, MAX_TIMER_MS),
    request: checkBound('requestReadTimeoutMs', options.requestReadTimeoutMs, MAX_TIMER_MS),
  }
  const headersTimeoutMs = given.headers ?? Math.min(HTTP_DEFAULTS.headersTimeoutMs, given.request ?? Infinity)
  const requestReadTimeoutMs = given.request ?? Math.max(HTTP_DEFAULTS.requestReadTimeoutMs, headersTimeoutMs)
  if (headersTimeoutMs > requestReadTimeoutMs)
    throw new McpServeUsageError(
      `headersTimeoutMs (${headersTimeoutMs}) must not exceed requestReadTimeoutMs (${requestReadTimeoutMs}): the ` +
        `headers are part of the request`,
    )
  return {
    host,
    loopback,
    token: options.token,
    allowOrigins,
    allowHosts,
    maxBodyBytes: checkBound('maxBodyBytes', options.maxBodyBytes ?? HTTP_DEFAULTS.maxBodyBytes),
    sessionIdleMs: checkBound('sessionIdleMs', options.sessionIdleMs ?? HTTP_DEFAULTS.sessionIdleMs, MAX_TIMER_MS),
    maxSessions: checkBound('maxSessions', options.maxSessions ?? HTTP_DEFAULTS.maxSessions),
    maxConnections: checkBound('maxConnections', options.maxConnections ?? HTTP_DEFAULTS.maxConnections),
    headersTimeoutMs,
    requestReadTimeoutMs,
  }
}
