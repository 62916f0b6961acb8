/**
 * The one escaping function of the CLI: text that came from a program, a tool,
 * a file or a session log never reaches a terminal with bytes the terminal
 * would act on (ESC/CSI/OSC sequences, C1 controls, bidi overrides).
 */

/**
 * What a terminal may interpret: C0 controls, DEL, C1 controls (U+0080-U+009F,
 * U+009B is an 8-bit CSI), lone surrogates, bidi embeddings/overrides/isolates
 * and marks (U+061C, U+200E, U+200F, U+202A-U+202E, U+2066-U+2069) and the
 * Unicode line/paragraph separators (U+2028, U+2029).
 */
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]/gu
/** The same without `\n` and `\t`, for multi-line text. */
const UNSAFE_MULTILINE =
  // eslint-disable-next-line no-control-regex
  /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]/gu

const SHORT: Readonly<Record<string, string>> = { '\n': '\\n', '\t': '\\t', '\r': '\\r' }

function visible(char: string): string {
  const short = SHORT[char]
  if (short !== undefined) return short
  const code = char.charCodeAt(0)
  return code < 0x100 ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`
}

export interface EscapeOptions {
  /** Keep `\n` and `\t` (text printed as several lines); default `false`: they are escaped too. */
  readonly multiline?: boolean
}

/**
 * `text` with every character a terminal could act on written visibly:
 * `\x1b`, `\x9b`, `\u202e`, `\ud800`, `\r` (and `\n`, `\t` unless `multiline`).
 * Printable text, including other non-ASCII characters, is unchanged; the
 * result is safe to write to a terminal and escaping it again changes nothing.
 */
export function escapeControl(text: string, options: EscapeOptions = {}): string {
  return text.replace(options.multiline === true ? UNSAFE_MULTILINE : UNSAFE, visible)
}

/** Characters `JSON.stringify` leaves raw although a terminal may act on them (C0 controls it escapes already). */
const JSON_UNSAFE = /[\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g

/**
 * `JSON.stringify(value)` with every control and bidi character as a `\uXXXX`
 * escape: the same JSON value, but safe to print on a terminal.
 */
export function safeJson(value: unknown): string {
  const text = JSON.stringify(value) ?? 'null'
  return text.replace(JSON_UNSAFE, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`)
}
