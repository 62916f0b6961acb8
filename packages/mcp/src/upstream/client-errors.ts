/** How many of its unusable messages one connection to an upstream reports (`onWarning`). */
const MAX_PROTOCOL_WARNINGS = 10

/** The message of `error`; for fetch's own failures, with the cause that says why. */
export function messageOf(error: unknown): string {
  if (!(error instanceof Error)) return String(error)
  // fetch's own failures say only "fetch failed": why is in the cause (e.g. UND_ERR_HEADERS_OVERFLOW).
  const cause = error.cause
  if (!/fetch failed$/.test(error.message) || !(cause instanceof Error)) return error.message
  const code = (cause as { code?: unknown }).code
  const named = typeof code === 'string' && !cause.message.includes(code) ? ` (${code})` : ''
  return `${error.message}: ${cause.message}${named}`
}

/**
 * `warn` for at most `MAX_PROTOCOL_WARNINGS` of what one connection does again and again; the last one says that
 * `further` (what comes after it) are not reported.
 */
export function fewTimes(warn: (message: string) => void, further: string): (message: string) => void {
  let told = 0
  return (message) => {
    if (told >= MAX_PROTOCOL_WARNINGS) return
    told++
    warn(told === MAX_PROTOCOL_WARNINGS ? `${message} (${further} are not reported)` : message)
  }
}

/**
 * Whether the client's error is a write to an upstream's stdin that its process closed (it runs on, reading
 * nothing).
 */
export function brokenPipe(error: Error): boolean {
  const code = (error as { code?: unknown }).code
  return code === 'EPIPE' || code === 'ERR_STREAM_DESTROYED' || code === 'ERR_STREAM_WRITE_AFTER_END'
}

/** What the SDK says when it drops a message it read (see `dropped`). */
const DROPPED = new RegExp(
  '^(Received a response for an unknown message ID|Received a progress notification for an unknown token|' +
    'Unknown message type)\\b',
)

/**
 * Whether the client's error is a message it dropped as it read (a line that is not JSON or not JSON-RPC, an answer
 * to no request, a message of no known kind), rather than a transport's failure, which fails calls and says so.
 */
export function dropped(error: Error): boolean {
  return error instanceof SyntaxError || error.name === 'ZodError' || DROPPED.test(error.message)
}
