/**
 * The waterfall engine: listeners are middleware `(…args, next)`. `next()`
 * delegates to the later listeners and finally to `last`. Calling `next()`
 * twice from one listener is an error. First registered is outermost.
 */
export function runWaterfall<A extends readonly unknown[], R>(
  listeners: readonly ((...args: [...A, () => Promise<R>]) => R | Promise<R>)[],
  args: A,
  last: () => R | Promise<R>,
): Promise<R> {
  if (listeners.length === 0) return Promise.resolve().then(last)
  const dispatch = (index: number): Promise<R> => {
    const listener = listeners[index]
    // The innermost step runs as the last listener calls next(): no extra turn of the microtask queue.
    if (listener === undefined) return settle(last)
    let called = false
    const next = (): Promise<R> => {
      if (called) return Promise.reject(new Error('next() called more than once'))
      called = true
      return dispatch(index + 1)
    }
    try {
      return Promise.resolve(listener(...args, next))
    } catch (error) {
      return Promise.reject(error)
    }
  }
  return dispatch(0)
}

/** `fn()` as a promise; a synchronous throw becomes a rejection. */
function settle<R>(fn: () => R | Promise<R>): Promise<R> {
  try {
    return Promise.resolve(fn())
  } catch (error) {
    return Promise.reject(error)
  }
}
