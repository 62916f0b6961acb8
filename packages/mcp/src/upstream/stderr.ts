import type { Readable } from 'node:stream'

/** The most bytes of an upstream's stderr waiting to be written at once; past it, what it writes is dropped. */
export const MAX_STDERR_BACKLOG = 1024 * 1024

/**
 * Copy a spawned upstream's stderr to `to`, holding at most `maxBacklog` bytes that `to` has not taken yet: when
 * `to` is not read as fast as the upstream writes (a client that does not read this process's stderr), the rest
 * is dropped instead of growing this process without bound, and the upstream is never held back by it.
 * `onDropped` gets the count of bytes dropped when writing resumes. Nothing is written to a destroyed `to`.
 */
export function forwardStderr(
  from: Readable,
  to: NodeJS.WritableStream,
  onDropped: (bytes: number) => void,
  maxBacklog = MAX_STDERR_BACKLOG,
): void {
  let backlog = 0
  let dropped = 0
  from.on('data', (chunk: Buffer) => {
    if ((to as { destroyed?: boolean }).destroyed === true) return
    // Once dropping, it drops until all it held was taken, so that a slow reader gets one count per backlog it
    // read, not one per chunk it made room for.
    if (dropped > 0 ? backlog > 0 : backlog + chunk.length > maxBacklog) {
      dropped += chunk.length
      return
    }
    if (dropped > 0) {
      onDropped(dropped)
      dropped = 0
    }
    backlog += chunk.length
    to.write(chunk, () => (backlog -= chunk.length))
  })
}
