import { describe, expect, test } from 'vitest'
import { formatLimit, oneLine } from './format.js'

describe('oneLine', () => {
  test('each run of newlines and the blanks around it becomes one ⏎', () => {
    expect(oneLine('a  \n\n  b\nc', 80)).toBe('a ⏎ b ⏎ c')
    expect(oneLine('\n a \n', 80)).toBe('⏎ a ⏎')
    expect(oneLine('  \n ', 80)).toBe('⏎')
    expect(oneLine('  plain  ', 80)).toBe('plain')
  })

  test('cuts to max characters with an ellipsis, never inside a surrogate pair', () => {
    expect(oneLine('abcdef', 4)).toBe('abc…')
    expect(oneLine('ab😀cd', 4)).toBe('ab…')
  })

  // The backtracking /\s*\n\s*/ that oneLine replaced is quadratic on a run of blanks without a newline: about
  // ten minutes for each of these megabyte inputs (0.9 s at 40 000 blanks, four times that per doubling); the
  // linear scan takes milliseconds. The 30 s timeout is only a hang bound, not a timing claim.
  test('a megabyte of blanks without a newline is flattened in one pass (a quadratic scan would hang here)', () => {
    expect(oneLine(`x${' '.repeat(1_000_000)}y`, 10)).toBe('x        …')
    expect(oneLine(`${' \t'.repeat(500_000)}\n`, 10)).toBe('⏎')
  }, 30_000)
})

describe('formatLimit', () => {
  test('whole MiB and KiB are named, with the exact bytes', () => {
    expect(formatLimit(1024 * 1024)).toBe('1 MiB (1048576 bytes)')
    expect(formatLimit(16 * 1024)).toBe('16 KiB (16384 bytes)')
    expect(formatLimit(1000)).toBe('1000 bytes')
  })
})
