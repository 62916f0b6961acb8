import type { JsonValue } from './types.js'

const parked = Symbol.for('@ptc/sandbox.parked')

/**
 * The rejection with which a host `call` parks its sub-call (see `CodeRunRequest.durable`): the call
 * does not settle; the run suspends once it waits on nothing else. `detail` goes with the suspended
 * run's `parked` list. In a run that is not durable it is an ordinary rejection with this message.
 */
export function parkCall(
  detail?: JsonValue,
  message = 'the call is waiting for a decision and this run cannot suspend',
): Error {
  return Object.assign(new Error(message), { [parked]: detail === undefined ? { detail: undefined } : { detail } })
}

/** What a `parkCall` rejection carries. */
export interface Parking {
  readonly detail?: JsonValue
}

/** The parking of a `call` rejection (`parkCall`), or undefined for any other rejection; total. */
export function parkingOf(error: unknown): Parking | undefined {
  try {
    if (typeof error !== 'object' || error === null) return undefined
    const mark = (error as Record<symbol, unknown>)[parked]
    return typeof mark === 'object' && mark !== null ? (mark as Parking) : undefined
  } catch {
    return undefined
  }
}
