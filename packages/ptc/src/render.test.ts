import { describe, expect, test } from 'vitest'
import { renderRunText } from './render.js'

describe('renderRunText', () => {
  test('puts the logs, then the value: strings raw, other JSON pretty-printed', () => {
    expect(renderRunText(['a', 'b'], { x: 1 })).toBe('a\nb\n{\n  "x": 1\n}')
    expect(renderRunText(['a'], 'plain')).toBe('a\nplain')
    expect(renderRunText([], undefined)).toBe('(run_code completed with no output)')
  })
})
