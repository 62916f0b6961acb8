import { setMaxListeners } from 'node:events'

/** A signal that aborts when either input aborts, and the release of its listeners. */
export interface FusedSignal {
  readonly signal: AbortSignal
  release(): void
}

const noop = (): void => {}

/**
 * Fuse the caller's signal with a wrapper's replacement. When they are the
 * same signal nothing is allocated. Listeners are removed on release, so a
 * long-lived caller signal does not accumulate them.
 */
export function fuseSignals(caller: AbortSignal, replacement: AbortSignal): FusedSignal {
  if (replacement === caller) return { signal: caller, release: noop }
  const controller = new AbortController()
  if (caller.aborted) controller.abort(caller.reason)
  else if (replacement.aborted) controller.abort(replacement.reason)
  if (controller.signal.aborted) return { signal: controller.signal, release: noop }
  const stopCaller = whenAborted(caller, () => controller.abort(caller.reason))
  const stopReplacement = whenAborted(replacement, () => controller.abort(replacement.reason))
  return {
    signal: controller.signal,
    release(): void {
      stopCaller()
      stopReplacement()
    },
  }
}

/**
 * The signal of one batch (or of one request: `@ptc/mcp` gives each MCP request one, released once it
 * settled): it aborts, with the caller's reason, when the caller's signal does, until released. However many
 * batches share the caller's signal (a harness may pass its session's to every call), that signal carries one
 * listener of ours; the batch's own carries what its calls add (their wrappers, gates and bodies, a `fetch`
 * or a timer each), which is not a leak and is not warned about.
 */
export function batchSignal(caller: AbortSignal): FusedSignal {
  const controller = new AbortController()
  setMaxListeners(0, controller.signal)
  if (caller.aborted) {
    controller.abort(caller.reason)
    return { signal: controller.signal, release: noop }
  }
  return { signal: controller.signal, release: whenAborted(caller, () => controller.abort(caller.reason)) }
}

/** Per signal: the functions waiting for it to abort, and the one listener of ours that runs them. */
interface Waiting {
  readonly waiters: Set<() => void>
  readonly onAbort: () => void
}

const waitingOn = new WeakMap<AbortSignal, Waiting>()

/**
 * Runs `waiter` once when `signal` aborts (never when it already has: check `aborted` first); returns the
 * function that stops waiting. However many calls wait on one signal (a harness may share one across hundreds
 * of concurrent calls), the signal carries one listener of ours, removed when the last waiter stops, so Node
 * never warns of a listener leak. A waiter that throws does not keep the others from running; its error is
 * reported as an uncaught exception, as an event listener's would be.
 */
export function whenAborted(signal: AbortSignal, waiter: () => void): () => void {
  let waiting = waitingOn.get(signal)
  if (waiting === undefined) {
    const waiters = new Set<() => void>()
    const onAbort = (): void => {
      waitingOn.delete(signal)
      for (const run of [...waiters]) {
        try {
          run()
        } catch (error) {
          process.nextTick(() => {
            throw error
          })
        }
      }
    }
    waiting = { waiters, onAbort }
    waitingOn.set(signal, waiting)
    signal.addEventListener('abort', onAbort, { once: true })
  }
  const { waiters, onAbort } = waiting
  // Each registration is its own entry, so one function may wait twice and stop each wait on its own.
  const entry = (): void => waiter()
  waiters.add(entry)
  return () => {
    if (!waiters.delete(entry) || waiters.size > 0) return
    signal.removeEventListener('abort', onAbort)
    if (waitingOn.get(signal)?.waiters === waiters) waitingOn.delete(signal)
  }
}
