import { createHash } from 'node:crypto'
import { describe, expect, test } from 'vitest'
import { DEFAULT_LOG_LIMITS, ELIDED_HEAD_CHARS, LogBudget, resolveLogLimits } from './log-limits.js'

const sha = (text: string): string => createHash('sha256').update(text, 'utf8').digest('hex')

describe('LogBudget', () => {
  test('arguments within maxValueChars are kept whole; longer ones as the head of their JSON text, their bytes and SHA-256', () => {
    const budget = new LogBudget({ maxValueChars: 1000, maxRunChars: 1_000_000 })
    const small = { text: 'a'.repeat(900) }
    expect(budget.arguments(small)).toEqual({ value: small })
    const large = { text: 'é'.repeat(1000) }
    const json = JSON.stringify(large)
    expect(budget.arguments(large)).toEqual({
      value: `${json.slice(0, ELIDED_HEAD_CHARS)}…`,
      elided: { bytes: Buffer.byteLength(json), sha256: sha(json) },
    })
  })

  test('past maxRunChars values are elided; a value no longer than the head is always whole', () => {
    const budget = new LogBudget({ maxValueChars: 10_000, maxRunChars: 2500 })
    const value = { text: 'x'.repeat(1000) } // 1 011 characters of JSON
    expect(budget.arguments(value).elided).toBeUndefined()
    expect(budget.arguments(value).elided).toBeUndefined()
    expect(budget.arguments(value).elided).toMatchObject({ bytes: 1011 }) // 2 022 spent, 1 011 does not fit
    expect(budget.arguments({ small: 'y'.repeat(200) })).toEqual({ value: { small: 'y'.repeat(200) } })
    // What did not fit was not spent: a value that still fits is kept whole.
    expect(budget.arguments({ text: 'z'.repeat(400) }).elided).toBeUndefined()
  })

  test('content past the bound is one text block with the head of its text; bytes count text as UTF-8 and images as their base64', () => {
    const budget = new LogBudget({ maxValueChars: 1000, maxRunChars: 1_000_000 })
    const blocks = [
      { type: 'text' as const, text: '€'.repeat(600) },
      { type: 'image' as const, mimeType: 'image/png', data: 'A'.repeat(800) },
    ]
    const fitted = budget.content(blocks)
    expect(fitted.elided).toEqual({ bytes: 600 * 3 + 800, sha256: sha(JSON.stringify(blocks)) })
    expect(fitted.content).toEqual([{ type: 'text', text: `${'€'.repeat(ELIDED_HEAD_CHARS)}…` }])
    expect(budget.content([{ type: 'text', text: 'short' }])).toEqual({ content: [{ type: 'text', text: 'short' }] })
  })

  test('the head never splits a surrogate pair', () => {
    const budget = new LogBudget({ maxValueChars: 300, maxRunChars: 1_000_000 })
    // The JSON text is `"😀😀…"`: its 256th unit (index 255) is the high half of a pair.
    const fitted = budget.arguments('😀'.repeat(300))
    const head = fitted.value as string
    expect(head.endsWith('…')).toBe(true)
    expect(head.length).toBe(ELIDED_HEAD_CHARS) // 255 units and the ellipsis
    expect(Buffer.from(head, 'utf8').toString('utf8')).toBe(head)
  })

  test('without limits every value is whole', () => {
    const budget = new LogBudget(undefined)
    const value = { text: 'x'.repeat(100_000) }
    expect(budget.arguments(value)).toEqual({ value })
    expect(budget.content([{ type: 'text', text: value.text }]).elided).toBeUndefined()
  })
})

describe('resolveLogLimits', () => {
  test('defaults, overrides, false, and bad values', () => {
    expect(resolveLogLimits(undefined)).toEqual(DEFAULT_LOG_LIMITS)
    expect(resolveLogLimits({ maxRunChars: 5 })).toEqual({
      maxValueChars: DEFAULT_LOG_LIMITS.maxValueChars,
      maxRunChars: 5,
    })
    expect(resolveLogLimits(false)).toBeUndefined()
    expect(() => resolveLogLimits({ maxValueChars: 0 })).toThrow(
      'logLimits.maxValueChars must be a positive integer, not 0',
    )
    expect(() => resolveLogLimits({ maxRunChars: Number.NaN })).toThrow(
      'logLimits.maxRunChars must be a positive integer, not NaN',
    )
    expect(() => resolveLogLimits(true as unknown as false)).toThrow(
      'logLimits must be false or { maxValueChars?, maxRunChars? }',
    )
  })
})
