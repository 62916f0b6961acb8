import type { Client } from '@modelcontextprotocol/sdk/client/index.js'
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js'
import { cancelledRequest } from './send-in-turn.js'

/** Ids of cancelled requests a connection remembers, to pass over late answers to them. */
const MAX_CANCELLED_KEPT = 4096

/** The SDK's error for an answer to no request it waits for. */
const UNKNOWN_ID = 'Received a response for an unknown message ID: '

/** The requests each client of a connection cancelled (their calls aborted or timed out), the most recent kept. */
export class CancelledRequests {
  readonly #cancelled = new WeakMap<Client, Set<string | number>>()

  /** `transport`, whose cancellations of requests are noted for `client`. */
  note(client: Client, transport: Transport): Transport {
    const ids = new Set<string | number>()
    this.#cancelled.set(client, ids)
    const send = transport.send.bind(transport)
    transport.send = (message, options) => {
      const id = cancelledRequest(message)
      if (id !== undefined) {
        ids.add(id)
        if (ids.size > MAX_CANCELLED_KEPT) ids.delete(ids.values().next().value as string | number)
      }
      return send(message, options)
    }
    return transport
  }

  /**
   * Whether `error` is the SDK's "unknown message ID" for an answer to a request `client` cancelled: the MCP
   * specification lets an upstream answer a request whose cancellation crossed it, and asks the client to ignore
   * that answer. Not the upstream's fault, and not counted among the few warnings of a connection.
   */
  answered(client: Client, error: Error): boolean {
    if (!error.message.startsWith(UNKNOWN_ID)) return false
    try {
      const id = (JSON.parse(error.message.slice(UNKNOWN_ID.length)) as { id?: unknown }).id
      return (typeof id === 'string' || typeof id === 'number') && this.#cancelled.get(client)?.has(id) === true
    } catch {
      return false
    }
  }
}
