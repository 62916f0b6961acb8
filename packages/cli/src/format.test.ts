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

  test('a megabyte of blanks without a newline takes linear time', () => {
    const started = performance.now()
    expect(oneLine(`x${' '.repeat(1_000_000)}y`, 10)).toBe('x        …')
    expect(oneLine(`${' \t'.repeat(500_000)}\n`, 10)).toBe('⏎')
    expect(performance.now() - started).toBeLessThan(1000)
  })
})

describe('formatLimit', () => {
  test('whole MiB and KiB are named, with the exact bytes', () => {
    expect(formatLimit(1024 * 1024)).toBe('1 MiB (1048576 bytes)')
    expect(formatLimit(16 * 1024)).toBe('16 KiB (16384 bytes)')
    expect(formatLimit(1000)).toBe('1000 bytes')
  })
})
