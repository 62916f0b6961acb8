import { whenAborted } from '../../abort.js'
import { MAX_TIMER_MS } from '../../limits.js'

/**
 * How long ptc waits for a session store where nothing else bounds the wait (a runtime's `dispose()` and
 * `endSession`, durable approval's store and take): a store that never answers (a Redis client queueing
 * commands through a partition, a hung network filesystem) must not hang a shutdown or a call.
 */
export const STORE_WAIT_MS = 10_000

/** A store's answer in time (`value`), or why it was not waited for any longer. */
export type StoreAnswer<T> = { ok: true; value: T } | { ok: false; reason: 'wall' | 'abort' }

/**
 * What `operation` (a store's promise) resolves to, or why it was given up on: `deadline` (a
 * `performance.now()` time) passed (`wall`) or `signal` aborted (`abort`) first. Its timer is referenced:
 * a caller waiting here keeps the process alive. A rejection of `operation` rejects; one that comes after
 * it was given up on is ignored. Without a deadline or a signal it just waits.
 */
export async function waitForStore<T>(
  operation: Promise<T>,
  bound: { readonly deadline?: number | undefined; readonly signal?: AbortSignal | undefined },
): Promise<StoreAnswer<T>> {
  const { deadline, signal } = bound
  if (deadline === undefined && signal === undefined) return { ok: true, value: await operation }
  if (signal?.aborted === true) {
    operation.catch(() => undefined)
    return { ok: false, reason: 'abort' }
  }
  let timer: ReturnType<typeof setTimeout> | undefined
  let stopWaiting: (() => void) | undefined
  const givenUp = new Promise<{ ok: false; reason: 'wall' | 'abort' }>((resolve) => {
    if (deadline !== undefined)
      timer = setTimeout(
        () => resolve({ ok: false, reason: 'wall' }),
        Math.min(MAX_TIMER_MS, Math.max(0, deadline - performance.now())),
      )
    if (signal !== undefined) stopWaiting = whenAborted(signal, () => resolve({ ok: false, reason: 'abort' }))
  })
  try {
    return await Promise.race([operation.then((value) => ({ ok: true as const, value })), givenUp])
  } finally {
    clearTimeout(timer)
    stopWaiting?.()
  }
}
