import { createHash } from 'node:crypto'
import { textHead, type ContentBlock, type JsonValue } from '@ptc/tools'

/**
 * How much of the values a program's sub-calls carry (their arguments, their results' content) one
 * `run_code` call writes to the session log. A program chooses how many calls it makes and how large their
 * arguments are: without a bound, one run of 10 000 calls could write gigabytes (200 calls with 4 MiB
 * arguments wrote 839 MB) and, with `ptc run`, hold all of it in memory.
 */
export interface LogLimits {
  /** The largest value logged whole, in characters of its JSON text (default 65 536). */
  readonly maxValueChars: number
  /** The most characters of values one run logs whole, all its sub-calls together (default 16 MiB). */
  readonly maxRunChars: number
}

export const DEFAULT_LOG_LIMITS: Readonly<LogLimits> = Object.freeze({
  maxValueChars: 64 * 1024,
  maxRunChars: 16 * 1024 * 1024,
})

/**
 * The characters of its JSON text (arguments) or of its text (content) an elided value keeps; a value no
 * longer than this is always logged whole, whatever the run has spent.
 */
export const ELIDED_HEAD_CHARS = 256

/** What the log says of a value it did not keep whole (the event's `elided.arguments` or `elided.content`). */
export interface Elision {
  /**
   * What the value weighed: the UTF-8 bytes of the arguments' JSON text; of content, its text's UTF-8 bytes plus its
   * images' base64.
   */
  readonly bytes: number
  /** SHA-256 (hex) of the value's JSON text, to compare it with a copy kept elsewhere. */
  readonly sha256: string
}

/** `options.logLimits` checked: the limits, or `undefined` to log every value whole (`false`). @throws TypeError */
export function resolveLogLimits(limits: Partial<LogLimits> | false | undefined): LogLimits | undefined {
  if (limits === false) return undefined
  if (limits !== undefined && (typeof limits !== 'object' || limits === null))
    throw new TypeError('logLimits must be false or { maxValueChars?, maxRunChars? }')
  const resolved = { ...DEFAULT_LOG_LIMITS, ...limits }
  for (const name of ['maxValueChars', 'maxRunChars'] as const) {
    const value = resolved[name]
    if (!Number.isSafeInteger(value) || value < 1)
      throw new TypeError(`logLimits.${name} must be a positive integer, not ${String(value)}`)
  }
  return resolved
}

/** One run's share of `LogLimits`: each value is kept whole while it fits, else as its head and its `Elision`. */
export class LogBudget {
  #left: number

  constructor(private readonly limits: LogLimits | undefined) {
    this.#left = limits?.maxRunChars ?? Number.POSITIVE_INFINITY
  }

  /** Arguments as the log keeps them: whole, or the head of their JSON text (a string) and its elision. */
  arguments(value: JsonValue): { value: JsonValue; elided?: Elision } {
    if (this.limits === undefined) return { value }
    const text = JSON.stringify(value)
    if (this.#fits(text.length, this.limits)) return { value }
    return { value: head(text), elided: { bytes: Buffer.byteLength(text, 'utf8'), sha256: sha256(text) } }
  }

  /** Content as the log keeps it: whole, or one text block with the head of its text, and its elision. */
  content(blocks: readonly ContentBlock[]): { content: ContentBlock[]; elided?: Elision } {
    if (this.limits === undefined) return { content: [...blocks] }
    const text = JSON.stringify(blocks)
    if (this.#fits(text.length, this.limits)) return { content: [...blocks] }
    let bytes = 0
    let shown = ''
    for (const block of blocks) {
      if (block.type === 'text') bytes += Buffer.byteLength(block.text, 'utf8')
      else bytes += block.data.length
      // Each block's own head first: a whole 20 MB text joined here would be copied to take 256 characters.
      if (shown.length < ELIDED_HEAD_CHARS)
        shown += `${shown === '' ? '' : '\n'}${block.type === 'text' ? textHead(block.text, ELIDED_HEAD_CHARS) : `[${block.mimeType} image]`}`
    }
    return { content: [{ type: 'text', text: head(shown) }], elided: { bytes, sha256: sha256(text) } }
  }

  /** Only called with limits (without them every value is whole). */
  #fits(chars: number, limits: LogLimits): boolean {
    if (chars <= ELIDED_HEAD_CHARS) return true
    if (chars > limits.maxValueChars || chars > this.#left) return false
    this.#left -= chars
    return true
  }
}

/** The first `ELIDED_HEAD_CHARS` of `text` and `…`. */
function head(text: string): string {
  return `${textHead(text, ELIDED_HEAD_CHARS)}…`
}

function sha256(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex')
}
