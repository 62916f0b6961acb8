import { STDIO_DEFAULT_MAX_BUFFER_SIZE } from '@modelcontextprotocol/sdk/shared/stdio.js'
import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js'

/**
 * The most bytes of one message ptc serve reads from an upstream (`UpstreamConnectionOptions.maxMessageBytes`),
 * on every transport: the MCP SDK's own bound on a stdio line. The SDK's HTTP transports read a whole answer, and
 * a server-sent event, into memory however long it is: an upstream that answered a call with an endless body grew
 * the host by 120 MiB a second, and went on after the call had timed out.
 */
export const MAX_UPSTREAM_MESSAGE_BYTES = STDIO_DEFAULT_MAX_BUFFER_SIZE

/** The largest `maxMessageBytes` ptc serve takes (512 MiB): a longer message could not be read as one string anyway. */
export const MAX_MESSAGE_BYTES = 2 ** 29

/** A response that went past the bound: what it answered, and the message to fail it with. */
export interface OversizedAnswer {
  /** The JSON-RPC id of the request whose POST this response answers; absent for a stream no request owns. */
  readonly requestId?: string | number
  readonly message: string
}

/**
 * A fetch for the SDK's HTTP transports whose response bodies are bounded: a JSON body at `maxBytes` in all, an
 * event stream at `maxBytes` per event (bytes since the last blank line). Past it the body fails, its connection
 * is closed, and `onOversized` is told which request it answered, before the transport sees the failure.
 */
export function boundedFetch(maxBytes: number, onOversized: (answer: OversizedAnswer) => void, base: FetchLike = fetch): FetchLike {
  return async (url, init) => {
    const response = await base(url, init)
    if (response.body === null || (response.status >= 300 && response.status < 400)) return response
    const events = (response.headers.get('content-type') ?? '').toLowerCase().includes('text/event-stream')
    const over = (): void => {
      const what = events ? 'one event of its event stream' : 'its answer'
      const requestId = requestIdOf(init)
      onOversized({ ...(requestId !== undefined && { requestId }), message: `${what} went past ${maxBytes} bytes (maxMessageBytes) and was not read further` })
    }
    const body = response.body.pipeThrough(events ? eventBound(maxBytes, over) : totalBound(maxBytes, over))
    const bounded = new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers })
    // The SDK names a response's url in its messages and follows redirects from it.
    Object.defineProperty(bounded, 'url', { value: response.url })
    return bounded
  }
}

function totalBound(maxBytes: number, over: () => void): TransformStream<Uint8Array, Uint8Array> {
  let bytes = 0
  return new TransformStream({
    transform(chunk, controller) {
      bytes += chunk.byteLength
      if (bytes > maxBytes) return overflow(controller, over)
      controller.enqueue(chunk)
    },
  })
}

const LF = 0x0a
const CR = 0x0d

/**
 * Counts the bytes of each event: an event ends at an empty line (lines end at `\n`, `\r` or `\r\n`, as the
 * event-stream format says). Events that start and end within one chunk are counted too.
 */
function eventBound(maxBytes: number, over: () => void): TransformStream<Uint8Array, Uint8Array> {
  let pending = 0
  let lineEmpty = true
  /** The last chunk ended with a `\r`: after a line with text (counted), or after an empty one (the event's end). */
  let afterCR: 'text' | 'empty' | undefined
  return new TransformStream({
    transform(chunk, controller) {
      if (chunk.length === 0) return
      let at = 0
      // A `\n` right after a `\r` that ended the last chunk belongs to that line end.
      if (afterCR !== undefined && chunk[0] === LF) {
        at = 1
        if (afterCR === 'text' && ++pending > maxBytes) return overflow(controller, over)
      }
      afterCR = undefined
      let nextLF = chunk.indexOf(LF, at)
      let nextCR = chunk.indexOf(CR, at)
      while (at < chunk.length) {
        if (nextLF !== -1 && nextLF < at) nextLF = chunk.indexOf(LF, at)
        if (nextCR !== -1 && nextCR < at) nextCR = chunk.indexOf(CR, at)
        const end = nextLF === -1 ? nextCR : nextCR === -1 ? nextLF : Math.min(nextLF, nextCR)
        const text = (end === -1 ? chunk.length : end) - at
        if (text > 0) lineEmpty = false
        pending += text
        if (pending > maxBytes) return overflow(controller, over)
        if (end === -1) break
        const crlf = chunk[end] === CR && chunk[end + 1] === LF
        if (chunk[end] === CR && end + 1 === chunk.length) afterCR = lineEmpty ? 'empty' : 'text'
        at = end + (crlf ? 2 : 1)
        if (lineEmpty) pending = 0
        else pending += crlf ? 2 : 1
        lineEmpty = true
      }
      controller.enqueue(chunk)
    },
  })
}

function overflow(controller: TransformStreamDefaultController<Uint8Array>, over: () => void): void {
  over()
  controller.error(new Error('the upstream sent a message longer than maxMessageBytes'))
}

/** The id of the JSON-RPC request a POST carried (the SDK sends one message per POST, as JSON text). */
function requestIdOf(init: RequestInit | undefined): string | number | undefined {
  if (typeof init?.body !== 'string') return undefined
  try {
    const message: unknown = JSON.parse(init.body)
    if (typeof message !== 'object' || message === null || !('method' in message) || !('id' in message)) return undefined
    const id = (message as { id: unknown }).id
    return typeof id === 'string' || typeof id === 'number' ? id : undefined
  } catch {
    return undefined
  }
}
