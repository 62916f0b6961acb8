/**
 * A signal for one request made through the MCP SDK, aborted when `signal` is, until `release()` (call it once the
 * request settled). The SDK never removes its listener from a request's signal, and when that signal aborts it sends
 * `notifications/cancelled` whether or not the request was answered: a run's signal, aborted when its program ends,
 * cancelled every call of the program, answered long before (2 741 notifications at once, each a new socket to an
 * HTTP upstream), and an elicitation the client had answered.
 */
export function requestSignal(signal: AbortSignal): { readonly signal: AbortSignal; release(): void } {
  const own = new AbortController()
  const forward = (): void => own.abort(signal.reason)
  if (signal.aborted) forward()
  else signal.addEventListener('abort', forward, { once: true })
  return { signal: own.signal, release: () => signal.removeEventListener('abort', forward) }
}
