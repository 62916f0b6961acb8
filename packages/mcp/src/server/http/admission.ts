import type { IncomingMessage } from 'node:http'
import { bearerCheck } from './auth.js'
import { hostKey, parseOrigin } from './names.js'
import { JSONRPC_ERROR, refusal, type Refusal } from './reply.js'

/** The checks every request passes before anything else is looked at. */
export interface RequestAdmission {
  /**
   * `Host` in the allowed set (DNS rebinding), then `Origin` absent or allowed (browsers): a refusal, or the allowed
   * origin.
   */
  place(req: IncomingMessage): Refusal | { readonly origin: string | undefined }
  /** The bearer token (always passes when authentication is off). */
  credentials(req: IncomingMessage): Refusal | undefined
}

export function requestAdmission(options: {
  hosts: ReadonlySet<string>
  origins: ReadonlySet<string>
  token: string | false
}): RequestAdmission {
  const { hosts, origins } = options
  const authorized = options.token === false ? undefined : bearerCheck(options.token)
  return {
    place(req) {
      const host = hostKey(req.headers.host ?? '')
      if (host === undefined || !hosts.has(host))
        return refusal(403, JSONRPC_ERROR.refused, 'Forbidden: Host header not allowed')
      const origin = req.headers.origin
      if (origin === undefined) return { origin: undefined }
      const normalized = parseOrigin(origin)
      if (normalized === undefined || !origins.has(normalized))
        return refusal(403, JSONRPC_ERROR.refused, 'Forbidden: Origin not allowed')
      return { origin }
    },
    credentials(req) {
      if (authorized === undefined || authorized(req.headers.authorization)) return undefined
      const challenge =
        req.headers.authorization === undefined ? 'Bearer realm="ptc"' : 'Bearer realm="ptc", error="invalid_token"'
      return refusal(401, JSONRPC_ERROR.refused, 'Unauthorized: send Authorization: Bearer <token>', {
        'www-authenticate': challenge,
      })
    },
  }
}

/**
 * CORS for an allowed origin, so a browser client there can read the answers
 * (and `Mcp-Session-Id`). A preflight gets the methods and headers of MCP; it
 * carries no credentials, so it is answered before the token check.
 */
export function corsHeaders(origin: string, preflight: boolean): Record<string, string> {
  const headers: Record<string, string> = {
    'access-control-allow-origin': origin,
    vary: 'Origin',
    'access-control-expose-headers': 'mcp-session-id, mcp-protocol-version, www-authenticate, retry-after',
  }
  if (!preflight) return headers
  return {
    ...headers,
    'access-control-allow-methods': 'GET, POST, DELETE',
    'access-control-allow-headers':
      'authorization, content-type, accept, mcp-session-id, mcp-protocol-version, last-event-id',
    'access-control-max-age': '600',
  }
}
