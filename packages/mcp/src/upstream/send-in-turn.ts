import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js'
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js'

/**
 * Makes a transport's messages go out one after another. The MCP SDK's stdio client transport writes each message
 * to the upstream's stdin and, when the pipe is full, waits for its next `drain` with a listener of its own: under
 * backpressure every message sent meanwhile added one, and past ten Node printed `MaxListenersExceededWarning:
 * Possible EventEmitter memory leak detected. 11 drain listeners added` (10 000 fast calls to a stdio upstream).
 * The pipe is private to the SDK's transport. Here a message is handed to the transport once the one before it has
 * been written: at most one listener waits, the order is kept, and a message sent while none waits goes at once.
 *
 * A request still waiting its turn when the client cancels it (its call was aborted or timed out: the SDK sends
 * `notifications/cancelled`) is not sent at all, nor is its cancellation: an upstream that reads slowly ran every
 * call a program had already been told failed, and its late answers were warned of as the upstream's fault. Its
 * message is let go of at once. Install before the client connects.
 */
export function sendInTurn<T extends Pick<Transport, 'send'>>(transport: T): T {
  const send = transport.send.bind(transport)
  /** Settles (never rejects) once the last message handed over has been written, or failed. */
  let last: Promise<void> | undefined
  /** Requests waiting their turn, by id. */
  const waiting = new Map<string | number, { message: JSONRPCMessage | undefined }>()
  transport.send = (message, options) => {
    const cancelled = cancelledRequest(message)
    const queued = cancelled === undefined ? undefined : waiting.get(cancelled)
    if (cancelled !== undefined && queued !== undefined) {
      waiting.delete(cancelled)
      queued.message = undefined
      return Promise.resolve()
    }
    let sent: Promise<void>
    if (last === undefined) {
      sent = send(message, options)
    } else {
      const id = 'method' in message && 'id' in message ? message.id : undefined
      const slot = { message: message as JSONRPCMessage | undefined }
      if (id !== undefined) waiting.set(id, slot)
      sent = last.then(() => {
        if (id !== undefined && waiting.get(id) === slot) waiting.delete(id)
        return slot.message === undefined ? undefined : send(slot.message, options)
      })
    }
    const written: Promise<void> = sent.then(
      () => void (last === written && (last = undefined)),
      () => void (last === written && (last = undefined)),
    )
    last = written
    return sent
  }
  return transport
}

/** The id of the request `message` cancels, when it is a `notifications/cancelled`. */
export function cancelledRequest(message: JSONRPCMessage): string | number | undefined {
  if (!('method' in message) || message.method !== 'notifications/cancelled' || 'id' in message) return undefined
  const id = (message.params as { requestId?: unknown } | undefined)?.requestId
  return typeof id === 'string' || typeof id === 'number' ? id : undefined
}
