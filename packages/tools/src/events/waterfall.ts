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
    if (listener === undefined) return Promise.resolve().then(last)
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
