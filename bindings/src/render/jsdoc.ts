/**
 * JSDoc text that can never end its comment early or smuggle code: `*\/` is escaped, every line
 * terminator (CR, LF, CRLF, U+2028, U+2029) starts a new ` * ` line, and invisible controls (C0,
 * DEL, C1, bidi overrides, lone surrogates) are shown as `\u{…}` escapes. Internal.
 */

const LINE_BREAK = /\r\n|[\r\n\u2028\u2029]/
const INVISIBLE =
  // eslint-disable-next-line no-control-regex
  /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\ufeff]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g

/** One text as safe comment lines (no terminator, no `*\/`, trailing blanks trimmed). */
export function _commentLines(text: string): string[] {
  return text.split(LINE_BREAK).map((line) =>
    line
      .replace(INVISIBLE, (c) => `\\u{${(c.codePointAt(0) ?? 0).toString(16)}}`)
      .replace(/\*\//g, '*\\/')
      .replace(/\s+$/, ''),
  )
}

/**
 * A JSDoc block at `indent` for already-safe `lines` (from {@link _commentLines}), ending in a
 * newline; `''` for no lines. One line renders as `/** text *\/`.
 */
export function _jsdoc(lines: readonly string[], indent: string): string {
  const trimmed = [...lines]
  while (trimmed.length > 0 && trimmed[0] === '') trimmed.shift()
  while (trimmed.length > 0 && trimmed[trimmed.length - 1] === '') trimmed.pop()
  if (trimmed.length === 0) return ''
  if (trimmed.length === 1) return `${indent}/** ${trimmed[0] ?? ''} */\n`
  return `${indent}/**\n${trimmed.map((l) => (l === '' ? `${indent} *` : `${indent} * ${l}`)).join('\n')}\n${indent} */\n`
}
