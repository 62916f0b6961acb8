/**
 * The sentences this package tells the model (a failed call's message and the reasons it quotes, a note in the
 * tool list), in one place so they can be read together. What only the operator reads (`onWarning`, usage
 * errors) stays beside the code that says it.
 */

// --- What an MCP client's model reads ---

/** A tool call whose arguments could not be read (`JSON.stringify` overflowed on them). */
export function argumentsTooDeep(tool: string): string {
  return `Error: invalid ${tool} arguments: they are nested too deeply to be read`
}

/** A tool call the pipeline answered with no result. */
export function noResult(): string {
  return 'Error: no result'
}

/** The note in `run_code`'s description while upstreams are not connected. */
export function upstreamsDown(labels: readonly string[]): string {
  return (
    `Not connected now (reconnecting): ${labels.map((label) => `upstream ${label}`).join(', ')}. ` +
    'Its tools appear, or work again, once it connects.'
  )
}

// --- A call to an upstream tool that failed ---

/** The upstream was closed (`UpstreamConnection.close`): its calls fail. */
export function upstreamClosed(label: string): string {
  return `upstream ${label} is closed`
}

/** The upstream could not be (re)connected for a call. */
export function upstreamUnavailable(label: string, why: string): string {
  return `upstream ${label} is unavailable: ${why}`
}

/** A connection attempt failed (`why`: what the SDK or the reading of the tool list said). */
export function upstreamNotConnected(label: string, why: string): string {
  return `upstream ${label} could not be connected: ${why}`
}

/** A call the upstream failed, or whose connection failed under it. */
export function upstreamCallFailed(label: string, why: string): string {
  return `upstream ${label}: ${why}`
}

/** Why a call failed when this side had reset its connection (`reset`: why, `stdinClosed` or `lineTooLong`). */
export function connectionWasReset(reset: string): string {
  return `the connection was reset: ${reset}`
}

// --- Why a connection was reset ---

/** A spawned upstream closed its stdin while it runs. */
export function stdinClosed(code: string | undefined): string {
  return `its stdin was closed (${code}): it reads no more requests`
}

/** A spawned upstream wrote a line past `maxMessageBytes`. */
export function lineTooLong(maxBytes: number): string {
  return `a line of its output went past ${maxBytes} bytes (maxMessageBytes)`
}

// --- Why a connection could not be made ---

/** An `auto` URL upstream refused both HTTP transports. */
export function bothTransportsRefused(status: number, streamable: string, legacy: string): string {
  return (
    `Streamable HTTP was refused (HTTP ${status}: ${streamable}), and so was the legacy HTTP+SSE transport ` +
    `(${legacy})`
  )
}

/** The whole tool list was not read within the request timeout. */
export function toolListTimedOut(timeoutMs: number, pages: number): string {
  return `its tool list was not read within ${timeoutMs} ms (${pages} pages)`
}

/** A `tools/list` answer without a list. */
export function noToolList(listed: unknown): string {
  return `its tools/list answer has no list of tools (tools: ${typeof listed})`
}

/** A `tools/list` answer with a cursor that is not a string. */
export function badCursor(nextCursor: unknown): string {
  return `its tools/list answer's nextCursor is not a string (${typeof nextCursor})`
}
