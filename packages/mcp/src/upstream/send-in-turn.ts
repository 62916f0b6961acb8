import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js'

/**
 * Makes a transport's messages go out one after another. The MCP SDK's stdio client transport writes each message
 * to the upstream's stdin and, when the pipe is full, waits for its next `drain` with a listener of its own: under
 * backpressure every message sent meanwhile added one, and past ten Node printed `MaxListenersExceededWarning:
 * Possible EventEmitter memory leak detected. 11 drain listeners added` (10 000 fast calls to a stdio upstream).
 * The pipe is private to the SDK's transport. Here a message is handed to the transport once the one before it has
 * been written: at most one listener waits, the order is kept, and a message sent while none waits goes at once.
 * Install before the client connects.
 */
export function sendInTurn<T extends Pick<Transport, 'send'>>(transport: T): T {
  const send = transport.send.bind(transport)
  /** Settles (never rejects) once the last message handed over has been written, or failed. */
  let last: Promise<void> | undefined
  transport.send = (message, options) => {
    const sent = last === undefined ? send(message, options) : last.then(() => send(message, options))
    const written: Promise<void> = sent.then(
      () => void (last === written && (last = undefined)),
      () => void (last === written && (last = undefined)),
    )
    last = written
    return sent
  }
  return transport
}
