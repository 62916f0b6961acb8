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

/** An answer being read: how to stop reading it, and the timer that will once the client has it (`answered`). */
interface Reading {
  readonly stop: AbortController
  timer?: NodeJS.Timeout
}

/** How long an upstream may keep an answer's event stream open after the client received the answer. */
export const ANSWERED_GRACE_MS = 1000

/** The most redirects followed for one request (fetch's own limit is 20). */
export const MAX_REDIRECTS = 5

/**
 * The fetch of the SDK's HTTP transports for one upstream connection (`fetch`), whose answers are bounded, in
 * size and in life:
 * - a JSON body at `maxBytes` in all, an event stream at `maxBytes` per event. Past it the body fails, its
 *   connection is closed, and `onOversized` is told which request it answered, before the transport sees the failure;
 * - the answer to a request the client cancels (its call timed out or was aborted: the SDK then POSTs
 *   `notifications/cancelled`) stops being read and its connection is closed. The SDK reads an answer until the
 *   upstream ends it, long after its call has ended: a hung upstream held one connection per ended call for
 *   undici's 300 s body timeout, one that trickled bytes held them for ever;
 * - so is an answer's event stream that the upstream keeps open `ANSWERED_GRACE_MS` after the client received
 *   the answer (`answered`), which the protocol says the server should close;
 * - a redirect is followed only within the upstream's origin: fetch would follow one to any origin with every
 *   header but `Authorization` (an API key given as `X-Api-Key` would go to whoever the upstream names).
 */
export class UpstreamFetch {
  /** The answers being read to requests this client POSTed, by JSON-RPC id: how to stop reading each. */
  readonly #reading = new Map<string | number, Reading>()

  constructor(
    readonly maxBytes: number,
    readonly onOversized: (answer: OversizedAnswer) => void,
    readonly base: FetchLike = fetch,
  ) {}

  readonly fetch: FetchLike = async (url, init) => {
    const message = postedMessage(init)
    if (message?.method === 'notifications/cancelled' && message.cancels !== undefined)
      this.#stop(message.cancels, 'the call was cancelled')
    const requestId = message?.method !== undefined ? message.id : undefined
    const stop = new AbortController()
    const signal = init?.signal == null ? stop.signal : AbortSignal.any([init.signal, stop.signal])
    const entry: Reading = { stop }
    if (requestId !== undefined) this.#reading.set(requestId, entry)
    const done = (): void => {
      if (requestId === undefined || this.#reading.get(requestId) !== entry) return
      clearTimeout(entry.timer)
      this.#reading.delete(requestId)
    }
    let response: Response
    try {
      response = await this.#send(new URL(url), { ...init, signal })
    } catch (error) {
      done()
      throw error
    }
    if (response.body === null || (response.status >= 300 && response.status < 400)) {
      done()
      return response
    }
    const events = (response.headers.get('content-type') ?? '').toLowerCase().includes('text/event-stream')
    const { maxBytes } = this
    const over = (): void => {
      const what = events ? 'one event of its event stream' : 'its answer'
      this.onOversized({
        ...(requestId !== undefined && { requestId }),
        message: `${what} went past ${maxBytes} bytes (maxMessageBytes) and was not read further`,
      })
    }
    const body = bounded(response.body, events ? eventBound(maxBytes) : totalBound(maxBytes), over, done)
    const answer = new Response(body, {
      status: response.status,
      statusText: response.statusText,
      headers: response.headers,
    })
    // The SDK names a response's url in its messages and follows redirects from it.
    Object.defineProperty(answer, 'url', { value: response.url })
    return answer
  }

  /**
   * `base`, following redirects (at most `MAX_REDIRECTS`) only to `url`'s own origin. @throws naming where it was sent
   */
  async #send(url: URL, init: RequestInit): Promise<Response> {
    let target = url
    let request = init
    for (let hop = 0; ; hop++) {
      const response = await this.base(target, { ...request, redirect: 'manual' })
      const location = response.headers.get('location')
      if (!REDIRECTS.has(response.status) || location === null) return response
      await response.body?.cancel().catch(() => undefined)
      const next = new URL(location, target)
      if (next.origin !== url.origin) {
        throw new Error(
          `it redirected to another origin (${next.origin}), which was not followed: the request's headers are for ` +
            `${url.origin} only`,
        )
      }
      if (hop === MAX_REDIRECTS) throw new Error(`it redirected more than ${MAX_REDIRECTS} times`)
      // As fetch does: a 303, and a 301 or 302 answering a POST, are followed with a GET and no body.
      if (
        response.status === 303 ||
        ((response.status === 301 || response.status === 302) && request.method === 'POST')
      ) {
        const { body: _body, ...rest } = request
        request = { ...rest, method: 'GET' }
      }
      target = next
    }
  }

  /**
   * The client received the answer to `requestId`: its stream, if the upstream has not ended it, ends after the grace.
   */
  answered(requestId: string | number): void {
    const entry = this.#reading.get(requestId)
    if (entry === undefined || entry.timer !== undefined) return
    entry.timer = setTimeout(
      () => this.#stop(requestId, 'the upstream kept the stream open after its answer'),
      ANSWERED_GRACE_MS,
    )
    entry.timer.unref()
  }

  #stop(requestId: string | number, why: string): void {
    this.#reading.get(requestId)?.stop.abort(new Error(why))
  }
}

const REDIRECTS = new Set([301, 302, 303, 307, 308])

/**
 * `body`, read chunk by chunk while each `fits`; `over` runs when one does not (the body then fails and is
 * cancelled, which closes its connection). `done` runs once the body is over, however it ends.
 */
function bounded(
  body: ReadableStream<Uint8Array>,
  fits: (chunk: Uint8Array) => boolean,
  over: () => void,
  done: () => void,
): ReadableStream<Uint8Array> {
  const reader = body.getReader()
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      let chunk: Awaited<ReturnType<typeof reader.read>>
      try {
        chunk = await reader.read()
      } catch (error) {
        done()
        return controller.error(error)
      }
      if (chunk.done) {
        done()
        return controller.close()
      }
      if (fits(chunk.value)) return controller.enqueue(chunk.value)
      done()
      over()
      controller.error(new Error('the upstream sent a message longer than maxMessageBytes'))
      await reader.cancel().catch(() => undefined)
    },
    async cancel(reason) {
      done()
      await reader.cancel(reason).catch(() => undefined)
    },
  })
}

function totalBound(maxBytes: number): (chunk: Uint8Array) => boolean {
  let bytes = 0
  return (chunk) => (bytes += chunk.byteLength) <= maxBytes
}

const LF = 0x0a
const CR = 0x0d

/**
 * Counts the bytes of each event: an event ends at an empty line (lines end at `\n`, `\r` or `\r\n`, as the
 * event-stream format says). Events that start and end within one chunk are counted too.
 */
function eventBound(maxBytes: number): (chunk: Uint8Array) => boolean {
  let pending = 0
  let lineEmpty = true
  /** The last chunk ended with a `\r`: after a line with text (counted), or after an empty one (the event's end). */
  let afterCR: 'text' | 'empty' | undefined
  return (chunk) => {
    if (chunk.length === 0) return true
    let at = 0
    // A `\n` right after a `\r` that ended the last chunk belongs to that line end.
    if (afterCR !== undefined && chunk[0] === LF) {
      at = 1
      if (afterCR === 'text' && ++pending > maxBytes) return false
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
      if (pending > maxBytes) return false
      if (end === -1) break
      const crlf = chunk[end] === CR && chunk[end + 1] === LF
      if (chunk[end] === CR && end + 1 === chunk.length) afterCR = lineEmpty ? 'empty' : 'text'
      at = end + (crlf ? 2 : 1)
      if (lineEmpty) pending = 0
      else pending += crlf ? 2 : 1
      lineEmpty = true
    }
    return true
  }
}

/** What is read here of the JSON-RPC message a POST carried (the SDK sends one per POST, as JSON text). */
interface PostedMessage {
  readonly method?: string
  readonly id?: string | number
  /** A cancellation's: the id of the request it cancels. */
  readonly cancels?: string | number
}

function postedMessage(init: RequestInit | undefined): PostedMessage | undefined {
  if (init?.method !== 'POST' || typeof init.body !== 'string') return undefined
  let message: unknown
  try {
    message = JSON.parse(init.body)
  } catch {
    return undefined
  }
  if (typeof message !== 'object' || message === null) return undefined
  const { method, id, params } = message as Record<string, unknown>
  const cancels =
    typeof params === 'object' && params !== null ? (params as Record<string, unknown>)['requestId'] : undefined
  return {
    ...(typeof method === 'string' && { method }),
    ...(isId(id) && { id }),
    ...(isId(cancels) && { cancels }),
  }
}

function isId(value: unknown): value is string | number {
  return typeof value === 'string' || typeof value === 'number'
}
