import type { IncomingMessage, ServerResponse } from 'node:http'

/** The JSON-RPC error codes the endpoint answers with (-32000 and -32001 as the MCP SDK uses them). */
export const JSONRPC_ERROR = {
  parseError: -32700,
  invalidRequest: -32600,
  internalError: -32603,
  /** Refused by the transport: authentication, Origin, Host, size, method, capacity. */
  refused: -32000,
  sessionNotFound: -32001,
} as const

/** An HTTP answer with a JSON-RPC error body (`id: null`). Data: the checks return it, `refuse` writes it. */
export interface Refusal {
  readonly status: number
  readonly code: number
  readonly message: string
  readonly headers?: Readonly<Record<string, string>>
}

export const refusal = (status: number, code: number, message: string, headers?: Record<string, string>): Refusal =>
  headers === undefined ? { status, code, message } : { status, code, message, headers }

/**
 * Write `r`. When part of the request body is still unread (it was refused
 * before or while reading it), the answer says `Connection: close` and the
 * socket is destroyed once the answer is out: nothing more is read, and a
 * keep-alive client opens a new connection for its next request instead of
 * meeting a reset one.
 */
export function refuse(req: IncomingMessage, res: ServerResponse, r: Refusal): void {
  const unread = bodyPending(req)
  const headers: Record<string, string> = { 'content-type': 'application/json', ...r.headers }
  if (unread) headers.connection = 'close'
  if (res.headersSent) {
    res.destroy()
    return
  }
  res.writeHead(r.status, headers)
  res.end(JSON.stringify({ jsonrpc: '2.0', error: { code: r.code, message: r.message }, id: null }))
  if (unread) res.once('finish', () => req.socket.destroy())
}

/** Whether the request announced a body that has not been received in full. */
export function bodyPending(req: IncomingMessage): boolean {
  if (req.complete) return false
  const length = req.headers['content-length']
  return req.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0')
}
