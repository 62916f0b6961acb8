import { describe, expect, test } from 'vitest'
import { SandboxUsageError } from './errors.js'
import { validateBindings } from './bindings.js'
import { OutputLedger, withinOutputBudget } from './ledger.js'
import { DEFAULT_LIMITS, resolveLimits } from './limits.js'
import { formatGuestError, prepareProgram } from './program.js'
import { mapStrippedColumn, stripTypeScript } from './strip.js'
import { MAX_VALUE_DEPTH } from './prelude/protocol.js'
import { fulfilEntry, parseProgramValue, rejectEntry, settleHostCall } from './settle.js'
import type { JsonValue } from './types.js'

describe('limits', () => {
  test('defaults live in one place and per-run limits override them', () => {
    expect(DEFAULT_LIMITS).toEqual({
      cpuMs: 30_000,
      wallMs: 120_000,
      memoryBytes: 256 * 1024 * 1024,
      maxOutputBytes: 1024 * 1024,
      maxSubCalls: 10_000,
      maxPendingSubCalls: 256,
      maxProgramBytes: 1024 * 1024,
      maxResultChars: 16 * 1024 * 1024,
      maxArgumentChars: 16 * 1024 * 1024,
    })
    expect(resolveLimits({ cpuMs: 5 }, { ...DEFAULT_LIMITS, wallMs: 9 })).toMatchObject({ cpuMs: 5, wallMs: 9 })
    expect(() => resolveLimits({ cpuMs: Number.NaN })).toThrow(SandboxUsageError)
    expect(() => resolveLimits({ nope: 1 } as never)).toThrow(SandboxUsageError)
    // A Node timer longer than 2^31-1 ms fires at once: such a wall would end every run immediately.
    expect(() => resolveLimits({ wallMs: 2 ** 31 })).toThrow(/at most 2147483647 ms/)
    expect(() => resolveLimits({ cpuMs: 2 ** 31 })).toThrow(SandboxUsageError)
    expect(resolveLimits({ wallMs: 2 ** 31 - 1 }).wallMs).toBe(2 ** 31 - 1)
  })
})

describe('bindings', () => {
  test('duplicates, non-strings and empty names are misuse; odd names are fine', () => {
    expect(validateBindings(['a', '__proto__', 'odd-name'])).toEqual(['a', '__proto__', 'odd-name'])
    expect(() => validateBindings(['a', 'a'])).toThrow(/duplicate/)
    expect(() => validateBindings([1])).toThrow(SandboxUsageError)
    expect(() => validateBindings([''])).toThrow(SandboxUsageError)
    expect(() => validateBindings('a')).toThrow(SandboxUsageError)
  })
})

describe('output ledger', () => {
  test('is exact to the UTF-8 byte, charges each entry its separator and keeps the fitting prefix', () => {
    const l = new OutputLedger(9)
    expect(l.log('é€')).toBe(true) // 5 bytes + 1
    expect(l.log('ab')).toBe(true) // 9
    expect(l.log('')).toBe(false) // an empty entry still costs its separator
    expect(l.log('c')).toBe(false)
    expect(l.logs).toEqual(['é€', 'ab'])
    expect(l.overflowed).toBe(true)
    expect(l.usedBytes).toBe(9)
    expect(new OutputLedger(4).value('"😀"')).toBe(false)
    expect(new OutputLedger(6).value('"😀"')).toBe(true)
  })

  test('empty entries cost one byte each: 1000 fit a 1000-byte budget, the next overflows', () => {
    const l = new OutputLedger(1000)
    for (let i = 0; i < 1000; i++) expect(l.log('')).toBe(true)
    expect(l.log('')).toBe(false)
    expect(l.logs).toHaveLength(1000)
    expect(l.overflowed).toBe(true)
  })

  test('a lone surrogate is charged the 3 bytes of U+FFFD, like the character itself', () => {
    expect(new OutputLedger(4).log('\ud800')).toBe(true)
    expect(new OutputLedger(3).log('\ud800')).toBe(false)
    expect(new OutputLedger(4).log('\ufffd')).toBe(true)
  })
})

describe('TypeScript stripping', () => {
  test('keeps lines, maps columns back and reports syntax errors in the model code', () => {
    const r = stripTypeScript('const a: number = 1\nconst b = a as number')
    expect(r.ok && r.code.split('\n')).toHaveLength(2)
    expect(mapStrippedColumn('const x: number = foo()', 'const x = foo()', 11)).toBe(19)
    const bad = stripTypeScript('const a = 1\nconst b: = 2')
    expect(bad).toMatchObject({ ok: false, line: 2 })
  })

  test('positions in stacks are mapped through the wrapper', () => {
    const p = prepareProgram('const a: number = 1\n  null.x')
    if (!p.ok) throw new Error('unexpected')
    expect(formatGuestError({ name: 'TypeError', message: 'x', stack: 'at f (ptc-program.js:3:7)' }, p.program)).toBe(
      'TypeError: x (line 2, column 7)',
    )
    expect(formatGuestError({ message: '"s"' }, p.program)).toBe('Uncaught "s"')
  })
})

describe('withinOutputBudget', () => {
  test("a failure's message is cut to the output budget, to the UTF-8 byte, with a note of the cut", () => {
    const bytes = (text: string): number => Buffer.byteLength(text, 'utf8')
    const fits = { kind: 'exception', message: `Error: ${'x'.repeat(93)}` } as const
    expect(withinOutputBudget(fits, 100)).toBe(fits)
    const cut = withinOutputBudget({ kind: 'invalid-output', message: `Error: ${'é'.repeat(100_000)}` }, 200)
    expect(cut.kind).toBe('invalid-output')
    expect(cut.message).toMatch(/^Error: é+ … \(cut to 200 bytes, the run's maxOutputBytes, from 100007 characters\)$/)
    expect(bytes(cut.message)).toBeLessThanOrEqual(200)
    expect(bytes(cut.message)).toBeGreaterThan(197)
    // Characters the guest already cut are counted, and the note is there even when what is left would fit.
    expect(withinOutputBudget({ kind: 'exception', message: `Error: ${'x'.repeat(93)}` }, 100, 5).message).toMatch(
      /^Error: x+ … \(cut to 100 bytes, the run's maxOutputBytes, from 105 characters\)$/,
    )
    // A surrogate pair is never split; a budget smaller than the note gets the bare prefix.
    expect(withinOutputBudget({ kind: 'exception', message: '😀'.repeat(50) }, 10).message).toBe('😀😀')
  })
})

describe('fulfilEntry', () => {
  test('a result longer than maxChars of JSON text (more than the guest memory holds) rejects its call', () => {
    expect(fulfilEntry(1, 'x'.repeat(8), { maxChars: 10 })).toBe(`[1,1,"${'x'.repeat(8)}"]`)
    expect(fulfilEntry(2, 'x'.repeat(9), { maxChars: 10 })).toBe(
      '[2,0,"the tool result is at least 11 characters of JSON, more than this sandbox\'s memory (10 bytes) can hold"]',
    )
    expect(fulfilEntry(2, ['x'.repeat(7)], { maxChars: 10 })).toBe(
      '[2,0,"the tool result is 11 characters of JSON, more than this sandbox\'s memory (10 bytes) can hold"]',
    )
    expect(fulfilEntry(3, [[[1]]], { maxDepth: 2 })).toMatch(/^\[3,0,"the tool result nests more than 2 levels deep/)
  })

  test('nesting is counted in arrays and objects alike, never inside strings (escaped quotes included)', () => {
    const deep = (n: number): JsonValue => (n === 0 ? 0 : { k: [deep(n - 1)] })
    expect(fulfilEntry(1, deep(2), { maxDepth: 4 })).toBe('[1,1,{"k":[{"k":[0]}]}]')
    expect(fulfilEntry(2, deep(3), { maxDepth: 5 })).toMatch(/^\[2,0,"the tool result nests more than 5 levels deep/)
    const brackets = ['[[[[{{{{', 'a \\" [[[[ " {{{{', { '[[[[': '}}]]' }]
    expect(fulfilEntry(3, brackets, { maxDepth: 2 })).toBe(`[3,1,${JSON.stringify(brackets)}]`)
    expect(fulfilEntry(4, [brackets], { maxDepth: 2 })).toMatch(/^\[4,0,"the tool result nests more than 2 levels deep/)
  })
})

describe('rejectEntry', () => {
  test("a host error's message crosses up to 64 Ki characters, its code and small details beside it", () => {
    expect(rejectEntry(1, Object.assign(new Error('no'), { code: 'DENIED', details: { why: 1 } }))).toBe(
      '[1,0,"no","DENIED",{"why":1}]',
    )
    // 300 000 quotes escape to 600 000 characters; at 300 million the escaping threw past V8's longest string.
    const entry = rejectEntry(2, new Error('"'.repeat(300_000)))
    expect(entry).toBe(`[2,0,${JSON.stringify(`${'"'.repeat(65_536)}… (cut from 300000 characters)`)}]`)
  })
})

describe('settleHostCall', () => {
  test('hands each call a fresh parse that it owns: unshared between calls, unfrozen, and what it does to it is not seen by the next', async () => {
    const received: JsonValue[] = []
    const request = {
      code: '',
      bindings: ['t'],
      call: async (_name: string, args: JsonValue) => {
        received.push(args)
        const echoed = JSON.stringify(args)
        // The callee owns the value: it may freeze or change it.
        if (typeof args === 'object' && args !== null && !Array.isArray(args))
          (args as Record<string, JsonValue>)['mutated'] = true
        return JSON.parse(echoed) as JsonValue
      },
    }
    const text = '{"a":[1,{"b":null}]}'
    expect(await settleHostCall(request, 7, 't', text, new AbortController().signal)).toBe('[7,1,{"a":[1,{"b":null}]}]')
    expect(await settleHostCall(request, 8, 't', text, new AbortController().signal)).toBe('[8,1,{"a":[1,{"b":null}]}]')
    const [first, second] = received as [Record<string, JsonValue>, Record<string, JsonValue>]
    expect(first).not.toBe(second)
    expect(first['a']).not.toBe(second['a'])
    expect(Object.isFrozen(second)).toBe(false)
    expect(second).toEqual({ a: [1, { b: null }], mutated: true })
  })

  test('arguments nested deeper than MAX_VALUE_DEPTH never reach the call (the host checks what a prelude should have refused)', async () => {
    let calls = 0
    const request = { code: '', bindings: ['t'], call: async () => (calls++, null) }
    const nested = (depth: number): string => `${'['.repeat(depth)}${']'.repeat(depth)}`
    const deep = await settleHostCall(request, 3, 't', nested(MAX_VALUE_DEPTH + 1), new AbortController().signal)
    expect(deep).toBe(`[3,0,"the arguments nest more than ${MAX_VALUE_DEPTH} levels deep"]`)
    expect(calls).toBe(0)
    // Brackets inside strings are text, not nesting.
    const quoted = `{"a":${JSON.stringify('['.repeat(5 * MAX_VALUE_DEPTH))},"b":${nested(MAX_VALUE_DEPTH - 1)}}`
    expect(await settleHostCall(request, 4, 't', quoted, new AbortController().signal)).toBe('[4,1,null]')
    expect(calls).toBe(1)
  })
})

describe('parseProgramValue', () => {
  test('a value nested deeper than MAX_VALUE_DEPTH is invalid-output; one at the bound parses', () => {
    const nested = (depth: number): string => `${'{"a":'.repeat(depth - 1)}[]${'}'.repeat(depth - 1)}`
    expect(parseProgramValue(nested(MAX_VALUE_DEPTH + 1))).toEqual({
      error: { kind: 'invalid-output', message: `the return value is nested more than ${MAX_VALUE_DEPTH} levels deep` },
    })
    const atBound = parseProgramValue(nested(MAX_VALUE_DEPTH))
    expect('value' in atBound && JSON.stringify(atBound.value).length).toBe(nested(MAX_VALUE_DEPTH).length)
    expect(parseProgramValue('"[[["')).toEqual({ value: '[[[' })
  })
})
