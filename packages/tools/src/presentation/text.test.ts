import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import { describe, expect, test } from 'vitest'
import { textHead } from './text.js'

/** A full garbage collection (the flag set at run time; the function read from a fresh context). */
function collect(): void {
  setFlagsFromString('--expose-gc')
  ;(runInNewContext('gc') as () => void)()
}

describe('textHead', () => {
  test('keeps a short text, cuts a long one at maxChars, one fewer rather than split a surrogate pair', () => {
    expect(textHead('abc', 3)).toBe('abc')
    expect(textHead('abcd', 3)).toBe('abc')
    expect(textHead('ab\u{1F600}cd', 3)).toBe('ab')
    expect(textHead('ab\u{1F600}cd', 4)).toBe('ab\u{1F600}')
  })

  test('a head does not keep its long text alive', () => {
    collect()
    const before = process.memoryUsage().heapUsed
    const heads: string[] = []
    // Ten texts of 10 MB, made by JSON.stringify as the log makes them; only their heads are kept.
    for (let i = 0; i < 10; i++) heads.push(`${textHead(JSON.stringify({ s: String(i).repeat(10_000_000) }), 256)}…`)
    collect()
    const grown = process.memoryUsage().heapUsed - before
    expect(heads.map((h) => h.length)).toEqual(Array.from({ length: 10 }, () => 257))
    // Kept whole, the texts would be 100 MB.
    expect(grown).toBeLessThan(20_000_000)
  })
})
