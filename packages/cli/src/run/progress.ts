/**
 * The live progress line of `ptc run` on a terminal: `ptc: running 3.2 s; sub-calls: 4 started, 3 settled`,
 * rewritten in place on stderr once a run has taken about a second. Never on a pipe or a file, never on
 * stdout (the model text).
 */
import { isTerminal, MESSAGE_PREFIX } from '../io.js'

/** What the line shows, read at each redraw. */
export interface ProgressCounts {
  readonly started: number
  readonly settled: number
}

export interface ProgressOptions {
  readonly counts: () => ProgressCounts
  /** Runs shorter than this never show the line (default 1000 ms). */
  readonly delayMs?: number
  /** Redraw period (default 100 ms). */
  readonly intervalMs?: number
  /** Milliseconds, for elapsed time (default `performance.now`). */
  readonly now?: () => number
  readonly env?: Readonly<Record<string, string | undefined>>
}

export interface ProgressLine {
  /** Starts the clock; the line appears after `delayMs`. */
  start(): void
  /** Takes the line off the screen until the returned function is called (for a prompt or a message). */
  suspend(): () => void
  /** Takes the line off the screen for good; safe to call more than once and before `start`. */
  stop(): void
}

/** Carriage return, then erase the whole line (CSI 2 K): the cursor is at column 0 of an empty line. */
export const CLEAR_LINE = '\r\x1b[2K'

const NO_PROGRESS: ProgressLine = { start: () => undefined, suspend: () => () => undefined, stop: () => undefined }

/**
 * A progress line on `stream` when it is a terminal (and `TERM` is not `dumb`, which cannot erase a line);
 * otherwise one that does nothing. Its timer is unref'd, so it never keeps the process alive; it also
 * clears itself if the process exits while it shows.
 */
export function progressLine(stream: NodeJS.WritableStream, options: ProgressOptions): ProgressLine {
  if (!isTerminal(stream) || (options.env ?? process.env)['TERM'] === 'dumb') return NO_PROGRESS
  const now = options.now ?? (() => performance.now())
  const delayMs = options.delayMs ?? 1000
  let startedAt: number | undefined
  let timer: NodeJS.Timeout | undefined
  let shown = false
  let suspended = 0

  const clear = (): void => {
    if (!shown) return
    shown = false
    stream.write(CLEAR_LINE)
  }
  const draw = (): void => {
    if (startedAt === undefined || suspended > 0) return
    const elapsed = now() - startedAt
    if (elapsed < delayMs) return
    const { started, settled } = options.counts()
    const text =
      `${MESSAGE_PREFIX}running ${(elapsed / 1000).toFixed(1)} s; sub-calls: ${started} started, ` +
      `${settled} settled`
    // Wider than the terminal, it would wrap, and `\r` would rewrite only its last row.
    const columns = (stream as { columns?: number }).columns
    shown = true
    stream.write(
      `${CLEAR_LINE}${columns !== undefined && columns > 1 && text.length >= columns ? `${text.slice(0, columns - 2)}…` : text}`,
    )
  }
  const stop = (): void => {
    if (timer !== undefined) clearInterval(timer)
    timer = undefined
    startedAt = undefined
    process.off('exit', clear)
    clear()
  }
  return {
    start() {
      if (startedAt !== undefined) return
      startedAt = now()
      timer = setInterval(draw, options.intervalMs ?? 100)
      timer.unref()
      process.once('exit', clear)
    },
    suspend() {
      suspended += 1
      clear()
      let resumed = false
      return () => {
        if (resumed) return
        resumed = true
        suspended -= 1
      }
    },
    stop,
  }
}
