import type { CodeRunError } from './types.js'

/** UTF-8 byte length of a string (lone surrogates count as the 3 bytes of U+FFFD, as the encoder writes). */
export function utf8ByteLength(text: string): number {
  return Buffer.byteLength(text, 'utf8')
}

/** What every log entry costs beyond its text: the line break that separates it in the model's text. */
export const LOG_SEPARATOR_BYTES = 1

/**
 * One output budget for a run: every log entry and the completion value draw from it, exact to the
 * UTF-8 byte. A log entry costs the bytes of its text plus its separator (so an empty entry still
 * costs one byte); the value costs the bytes of its JSON text. When an entry does not fit, it is
 * dropped, the ledger is marked overflowed, and the logs keep the prefix that fit: no entry is ever
 * dropped without the ledger saying so.
 */
export class OutputLedger {
  readonly maxBytes: number
  readonly logs: string[] = []
  #used = 0
  #overflowed = false
  /** The UTF-8 bytes of the entry that did not fit (`exact` false: at least that many, it was not encoded). */
  #overflow: { bytes: number; exact: boolean } | undefined

  /** `usedBytes`: what an earlier part of the same run already charged (a resumed run). */
  constructor(maxBytes: number, usedBytes = 0) {
    this.maxBytes = maxBytes
    this.#used = usedBytes
  }

  get usedBytes(): number {
    return this.#used
  }

  get remainingBytes(): number {
    return this.maxBytes - this.#used
  }

  get overflowed(): boolean {
    return this.#overflowed
  }

  /** Records a log entry; false (and nothing recorded) when it does not fit or the ledger overflowed. */
  log(text: string): boolean {
    if (!this.#charge(text, LOG_SEPARATOR_BYTES)) return false
    this.logs.push(text)
    return true
  }

  /** Charges the completion value's JSON text; false (ledger overflowed) when it does not fit. */
  value(jsonText: string): boolean {
    return this.#charge(jsonText, 0)
  }

  #charge(text: string, extra: number): boolean {
    if (this.#overflowed) return false
    const room = this.remainingBytes - extra
    // A string never takes fewer UTF-8 bytes than UTF-16 units: reject huge entries before encoding.
    const bytes = text.length > room ? Number.POSITIVE_INFINITY : utf8ByteLength(text)
    if (bytes > room) {
      this.#overflowed = true
      const exact = bytes !== Number.POSITIVE_INFINITY
      this.#overflow = { bytes: (exact ? bytes : text.length) + extra, exact }
      return false
    }
    this.#used += bytes + extra
    return true
  }

  /** The message of an `output-limit` failure: the setting, what did not fit, and what the program can do. */
  describeOverflow(what: 'log' | 'value'): string {
    const entry = what === 'log' ? 'a log entry' : 'the return value'
    const overflow = this.#overflow
    const size = overflow === undefined ? '' : ` of ${overflow.exact ? '' : 'at least '}${overflow.bytes} bytes`
    return (
      `output limit of ${this.maxBytes} bytes (maxOutputBytes) exceeded: ${entry}${size} did not fit ` +
      `after ${this.#used} bytes of earlier output; ` +
      'print or return less (the fields needed or a summary, not whole tool results)'
    )
  }
}

/**
 * A run's failure as the model reads it: its message at most `maxBytes` UTF-8 bytes (the run's
 * `maxOutputBytes`), else its longest prefix that fits with a note of the cut. Messages made from what the
 * guest chose can be as long as its memory allows: a thrown `'x'.repeat(2e7)`, a tool's error the program
 * rethrows, an `invalid-output` path naming the program's own keys. `cutChars`: characters the guest already
 * cut from the end of the message (`GuestErrorInfo.cutChars`), which the note counts.
 */
export function withinOutputBudget(error: CodeRunError, maxBytes: number, cutChars = 0): CodeRunError {
  const { message } = error
  // A UTF-16 unit takes at most 3 UTF-8 bytes.
  if (cutChars === 0 && (message.length * 3 <= maxBytes || utf8ByteLength(message) <= maxBytes)) return error
  const note = ` … (cut to ${maxBytes} bytes, the run's maxOutputBytes, from ${message.length + cutChars} characters)`
  const room = maxBytes - utf8ByteLength(note)
  return { ...error, message: room <= 0 ? utf8Prefix(message, maxBytes) : utf8Prefix(message, room) + note }
}

/** The longest prefix of `text` that takes at most `maxBytes` UTF-8 bytes (a surrogate pair is never split). */
function utf8Prefix(text: string, maxBytes: number): string {
  const { read } = new TextEncoder().encodeInto(text.slice(0, maxBytes), new Uint8Array(maxBytes))
  return text.slice(0, read)
}
