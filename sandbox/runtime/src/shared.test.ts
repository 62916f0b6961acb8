import { describe, expect, test } from 'vitest'
import { SandboxUsageError } from './errors.js'
import { validateBindings } from './bindings.js'
import { OutputLedger } from './ledger.js'
import { DEFAULT_LIMITS, resolveLimits } from './limits.js'
import { formatGuestError, prepareProgram } from './program.js'
import { mapStrippedColumn, stripTypeScript } from './strip.js'

describe('limits', () => {
  test('defaults live in one place and per-run limits override them', () => {
    expect(DEFAULT_LIMITS).toEqual({
      cpuMs: 30_000, wallMs: 120_000, memoryBytes: 256 * 1024 * 1024, maxOutputBytes: 1024 * 1024, maxSubCalls: 10_000, maxPendingSubCalls: 256,
    })
    expect(resolveLimits({ cpuMs: 5 }, { ...DEFAULT_LIMITS, wallMs: 9 })).toMatchObject({ cpuMs: 5, wallMs: 9 })
    expect(() => resolveLimits({ cpuMs: Number.NaN })).toThrow(SandboxUsageError)
    expect(() => resolveLimits({ nope: 1 } as never)).toThrow(SandboxUsageError)
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
  test('is exact to the UTF-8 byte and keeps the fitting prefix', () => {
    const l = new OutputLedger(7)
    expect(l.log('é€')).toBe(true) // 5 bytes
    expect(l.log('ab')).toBe(true) // 7
    expect(l.log('c')).toBe(false)
    expect(l.logs).toEqual(['é€', 'ab'])
    expect(l.overflowed).toBe(true)
    expect(new OutputLedger(4).value('"😀"')).toBe(false)
    expect(new OutputLedger(6).value('"😀"')).toBe(true)
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
