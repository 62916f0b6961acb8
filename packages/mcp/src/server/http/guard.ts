import type { IncomingMessage } from 'node:http'
import { bearerCheck } from './auth.js'
import { hostKey, parseOrigin } from './names.js'
import { JSONRPC_ERROR, refusal, type Refusal } from './reply.js'

/**
 * The checks every request passes before anything else is looked at, in this
 * order: `Host` in `hosts` (DNS rebinding), `Origin` absent or in `origins`
 * (browsers), then the bearer token (unless `token` is `false`).
 */
export function requestGuard(options: { hosts: ReadonlySet<string>; origins: ReadonlySet<string>; token: string | false }): (req: IncomingMessage) => Refusal | undefined {
  const { hosts, origins } = options
  const authorized = options.token === false ? undefined : bearerCheck(options.token)
  return (req) => {
    const host = hostKey(req.headers.host ?? '')
    if (host === undefined || !hosts.has(host)) return refusal(403, JSONRPC_ERROR.refused, 'Forbidden: Host header not allowed')
    const origin = req.headers.origin
    if (origin !== undefined) {
      const normalized = parseOrigin(origin)
      if (normalized === undefined || !origins.has(normalized)) return refusal(403, JSONRPC_ERROR.refused, 'Forbidden: Origin not allowed')
    }
    if (authorized !== undefined && !authorized(req.headers.authorization)) {
      const challenge = req.headers.authorization === undefined ? 'Bearer realm="ptc"' : 'Bearer realm="ptc", error="invalid_token"'
      return refusal(401, JSONRPC_ERROR.refused, 'Unauthorized: send Authorization: Bearer <token>', { 'www-authenticate': challenge })
    }
    return undefined
  }
}
