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
  const onCaller = (): void => controller.abort(caller.reason)
  const onReplacement = (): void => controller.abort(replacement.reason)
  caller.addEventListener('abort', onCaller, { once: true })
  replacement.addEventListener('abort', onReplacement, { once: true })
  return {
    signal: controller.signal,
    release(): void {
      caller.removeEventListener('abort', onCaller)
      replacement.removeEventListener('abort', onReplacement)
    },
  }
}
