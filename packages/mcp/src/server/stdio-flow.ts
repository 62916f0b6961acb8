import type { Readable, Writable } from 'node:stream'
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js'
import { isJSONRPCNotification, isJSONRPCRequest, type JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js'

/** The most requests of the stdio client being handled at once; later ones wait, unread past the first chunk. */
export const MAX_REQUESTS_IN_FLIGHT = 16

/** The most bytes of answers waiting for the stdio client to read them before no further request is taken. */
export const MAX_STDOUT_BACKLOG = 8 * 1024 * 1024

type Receive = NonNullable<Transport['onmessage']>

/**
 * Flow control of `ptc serve` over stdio. The SDK handles every request it has read at once and writes every
 * answer whether or not the client reads them: a client that sent requests and did not read its stdout had every
 * one run and every answer held (60 answers of 1 MB: 60 MB, without bound). Here a request is handed to the
 * server only while fewer than `MAX_REQUESTS_IN_FLIGHT` are unanswered and less than `MAX_STDOUT_BACKLOG` of
 * answers wait to be read; others wait in order and stdin is paused (so the pipe, not this process, holds what
 * the client sends next). Notifications (a cancellation) and the client's answers to the server's own requests
 * (an approval asked by elicitation) are never held; a waiting request that is cancelled is dropped. Install before the
 * server connects (it wraps the `onmessage` the server sets); `stop()` once serving is over.
 */
export function stdioFlowControl(transport: Transport, stdin: Readable, stdout: Writable): { stop(): void } {
  const unanswered = new Set<string | number>()
  const waiting: Parameters<Receive>[] = []
  let deliver: Receive | undefined
  let paused = false
  let stopped = false
  const full = (): boolean => unanswered.size >= MAX_REQUESTS_IN_FLIGHT || stdout.writableLength > MAX_STDOUT_BACKLOG
  const pass = (message: JSONRPCMessage, extra?: Parameters<Receive>[1]): void => {
    if (isJSONRPCRequest(message)) unanswered.add(message.id)
    deliver?.(message, extra)
  }
  const release = (): void => {
    if (stopped) return
    while (waiting.length > 0 && !full()) pass(...(waiting.shift() as Parameters<Receive>))
    if (waiting.length === 0 && paused) {
      paused = false
      stdin.resume()
    }
  }
  const receive: Receive = (message, extra) => {
    // A request cancelled while it waits is dropped: the protocol expects no answer to it.
    if (isJSONRPCNotification(message) && message.method === 'notifications/cancelled') {
      const cancelled = waiting.findIndex(([m]) => isJSONRPCRequest(m) && m.id === message.params?.['requestId'])
      if (cancelled !== -1) return void waiting.splice(cancelled, 1)
    }
    if (!isJSONRPCRequest(message) || (waiting.length === 0 && !full())) return pass(message, extra)
    waiting.push([message, extra])
    if (!paused) {
      paused = true
      stdin.pause()
    }
  }
  // The server sets `onmessage` when it connects (chaining what it finds): it gets `receive` in front of it.
  Object.defineProperty(transport, 'onmessage', {
    configurable: true,
    get: () => (deliver === undefined ? undefined : receive),
    set: (handler: Receive | undefined) => void (deliver = handler),
  })
  const send = transport.send.bind(transport)
  transport.send = (message, options) => {
    const sent = send(message, options)
    if (
      'id' in message &&
      message.id !== undefined &&
      ('result' in message || 'error' in message) &&
      unanswered.delete(message.id)
    )
      release()
    return sent
  }
  stdout.on('drain', release)
  // Each message the SDK writes while stdout is full waits on a 'drain' listener of its own: up to
  // MAX_REQUESTS_IN_FLIGHT answers and the progress notifications of their runs, by design. Past 10 listeners Node
  // printed a MaxListenersExceededWarning ("possible EventEmitter memory leak") to a client that reads slowly.
  const maxListeners = stdout.getMaxListeners()
  stdout.setMaxListeners(0)
  return {
    stop() {
      stopped = true
      stdout.off('drain', release)
      stdout.setMaxListeners(maxListeners)
      waiting.length = 0
    },
  }
}
