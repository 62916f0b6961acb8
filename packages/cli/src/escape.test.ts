import fc from 'fast-check'
import { describe, expect, test } from 'vitest'
import { escapeControl, safeJson } from './escape.js'

/** Everything a terminal may act on (the set `escapeControl` promises to remove). */
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]/u
const UNSAFE_KEEPING_LINES =
  // eslint-disable-next-line no-control-regex
  /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]/u

/** Any UTF-16 text, lone surrogates included, with control and bidi characters mixed in often. */
const hostile = fc.string({
  unit: fc.oneof(
    fc.constantFrom(
      '\x1b',
      '\x07',
      '\x9b',
      '\u202e',
      '\u2066',
      '\r',
      '\n',
      '\t',
      '\x7f',
      '\0',
      '\ud800',
      '\udfff',
      '\u2028',
    ),
    fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }),
    fc.string({ unit: 'grapheme', minLength: 1, maxLength: 1 }),
  ),
})

describe('escapeControl', () => {
  test('escapes ESC, OSC, BEL, C1 CSI and bidi overrides visibly', () => {
    expect(escapeControl('a\x1b[31mred\x1b]0;title\x07 \x9b1m \u202eevil')).toBe(
      'a\\x1b[31mred\\x1b]0;title\\x07 \\x9b1m \\u202eevil',
    )
    expect(escapeControl('\0\x7f\u2066\u2069\u061c\u200f')).toBe('\\x00\\x7f\\u2066\\u2069\\u061c\\u200f')
  })

  test('a lone surrogate is escaped, a surrogate pair (an emoji) is kept', () => {
    expect(escapeControl('x\ud83dy\ude00z 😀')).toBe('x\\ud83dy\\ude00z 😀')
  })

  test('newlines, tabs and carriage returns are escaped on one line; multi-line text keeps \\n and \\t only', () => {
    expect(escapeControl('a\nb\tc\rd')).toBe('a\\nb\\tc\\rd')
    expect(escapeControl('a\nb\tc\rd', { multiline: true })).toBe('a\nb\tc\\rd')
  })

  test('printable text is unchanged: ASCII, accents, CJK, emoji, zero-width joiners, backslashes', () => {
    for (const text of [
      'plain ASCII ~!@#$%^&*()',
      'café €5 — “quoted”',
      '漢字かな',
      '👩‍💻 🇸🇪',
      'a\\x1b is already escaped',
    ]) {
      expect(escapeControl(text)).toBe(text)
    }
  })

  test('property: the result never contains a character a terminal may act on', () => {
    fc.assert(
      fc.property(hostile, (text) => {
        expect(escapeControl(text)).not.toMatch(UNSAFE)
        expect(escapeControl(text, { multiline: true })).not.toMatch(UNSAFE_KEEPING_LINES)
      }),
      { numRuns: 500 },
    )
  })

  test('property: text without such characters is unchanged, and escaping twice is escaping once', () => {
    fc.assert(
      fc.property(hostile, (text) => {
        const safe = text.replace(new RegExp(UNSAFE.source, 'gu'), '')
        expect(escapeControl(safe)).toBe(safe)
        expect(escapeControl(escapeControl(text))).toBe(escapeControl(text))
      }),
      { numRuns: 500 },
    )
  })

  test('property: each unsafe character becomes its own escape, every other code point stays as it is', () => {
    const visible = (c: string): string =>
      c === '\n'
        ? '\\n'
        : c === '\t'
          ? '\\t'
          : c === '\r'
            ? '\\r'
            : c.charCodeAt(0) < 0x100
              ? `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`
              : `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`
    fc.assert(
      fc.property(hostile, (text) => {
        const expected = Array.from(text, (c) => (UNSAFE.test(c) ? visible(c) : c)).join('')
        expect(escapeControl(text)).toBe(expected)
      }),
      { numRuns: 500 },
    )
  })
})

describe('safeJson', () => {
  test('is the same JSON value with C1, DEL and bidi characters as \\u escapes', () => {
    const value = { text: 'a\x1b[31m\x9b\u202e\x7f\ud800\u2028b', n: 1 }
    const json = safeJson(value)
    expect(json).toBe('{"text":"a\\u001b[31m\\u009b\\u202e\\u007f\\ud800\\u2028b","n":1}')
    expect(JSON.parse(json)).toEqual(value)
  })

  test('property: parses back to the same value and contains no character a terminal may act on', () => {
    fc.assert(
      fc.property(fc.jsonValue(), hostile, (value, text) => {
        const input = { value, text }
        const json = safeJson(input)
        expect(json).not.toMatch(UNSAFE)
        expect(JSON.parse(json)).toEqual(JSON.parse(JSON.stringify(input)))
      }),
      { numRuns: 300 },
    )
  })
})
