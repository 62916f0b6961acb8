import { whenAborted } from './signal.js'

/** A notification that cannot throw into the pipeline, and is given once. */
export function catching(notify: ((reason: unknown) => void) | undefined): ((reason: unknown) => void) | undefined {
  if (notify === undefined) return undefined
  let notified = false
  return (reason) => {
    if (notified) return
    notified = true
    try {
      notify(reason)
    } catch {
      // an executor's notification cannot fail the call
    }
  }
}

/** Report the signal's abort (now, if it already aborted) until the returned function is called. */
export function watchAbort(signal: AbortSignal, notify: ((reason: unknown) => void) | undefined): () => void {
  if (notify === undefined) return noop
  if (signal.aborted) {
    notify(signal.reason)
    return noop
  }
  return whenAborted(signal, () => notify(signal.reason))
}

export const noop = (): void => {}
