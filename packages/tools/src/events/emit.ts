/**
 * Run `emit` listeners: they only observe. A listener that throws, or returns
 * a promise that rejects, is caught; the others still run.
 */
export function emitToObservers<A extends readonly unknown[]>(
  listeners: readonly ((...args: A) => unknown)[],
  args: A,
): void {
  for (const listener of listeners) {
    try {
      const returned = listener(...args)
      if ((typeof returned === 'object' && returned !== null) || typeof returned === 'function') {
        // An async observer: its rejection (or a hostile `then`) must not become an unhandled rejection.
        Promise.resolve(returned).catch(ignore)
      }
    } catch {
      // Observers only observe: their failures are caught and cannot fail anything.
    }
  }
}

function ignore(): void {}
