import fc from 'fast-check'
import { describe, expect, test } from 'vitest'
import { NotJsonError } from '../errors.js'
import { _snapshotOnce, adoptParsedJson, MAX_JSON_CHARS, snapshotJson, snapshotJsonOrThrow } from './snapshot.js'
import type { JsonValue } from './types.js'

function isDeepFrozen(value: unknown): boolean {
  const stack: unknown[] = [value]
  while (stack.length > 0) {
    const v = stack.pop()
    if (typeof v !== 'object' || v === null) continue
    if (!Object.isFrozen(v)) return false
    stack.push(...Object.values(v))
  }
  return true
}

/** fc.jsonValue() may produce -0, which is not lossless JSON. */
const losslessJson = fc.jsonValue().map((v) => JSON.parse(JSON.stringify(v)) as JsonValue)

function sparse(): unknown[] {
  const array = [1, 2, 3]
  delete array[1]
  return array
}

function rejection(value: unknown): { path: string; message: string } {
  const result = snapshotJson(value)
  if (result.ok) throw new Error('expected a rejection')
  return { path: result.path, message: result.message }
}

describe('snapshotJson', () => {
  test('copies a JSON tree into a fresh deep-frozen value', () => {
    const source = { a: [1, 'x', true, null, { b: 2.5 }], c: {} }
    const result = snapshotJson(source)
    expect(result).toEqual({ ok: true, value: source })
    if (!result.ok) return
    expect(result.value).not.toBe(source)
    expect(isDeepFrozen(result.value)).toBe(true)
    expect(Object.isFrozen(source)).toBe(false)
    expect(Object.getPrototypeOf(result.value)).toBe(Object.prototype)
  })

  test('round-trips arbitrary lossless JSON', () => {
    fc.assert(
      fc.property(losslessJson, (value) => {
        const result = snapshotJson(value)
        expect(result.ok).toBe(true)
        if (result.ok) {
          expect(result.value).toStrictEqual(value)
          expect(isDeepFrozen(result.value)).toBe(true)
        }
      }),
    )
  })

  test('is total on arbitrary values', () => {
    fc.assert(
      fc.property(
        fc.anything({
          withBigInt: true,
          withMap: true,
          withSet: true,
          withDate: true,
          withTypedArray: true,
          withSparseArray: true,
          withNullPrototype: true,
          withObjectString: true,
          withBoxedValues: true,
        }),
        (value) => {
          const result = snapshotJson(value)
          expect(typeof result.ok).toBe('boolean')
        },
      ),
    )
  })

  test.each([
    ['undefined', { a: undefined }, '/a', /undefined/],
    ['a BigInt', { a: [1n] }, '/a/0', /BigInt/],
    ['a symbol', [Symbol('s')], '/0', /symbol/],
    ['a function', { f: () => 1 }, '/f', /function/],
    ['NaN', { n: NaN }, '/n', /NaN/],
    ['Infinity', [Infinity], '/0', /Infinity/],
    ['-Infinity', [-Infinity], '/0', /Infinity/],
    ['-0', { z: -0 }, '/z', /-0/],
    ['a Map', { m: new Map() }, '/m', /Map/],
    ['a Set', { s: new Set() }, '/s', /Set/],
    ['a Date', { d: new Date(0) }, '/d', /Date/],
    ['a RegExp', { r: /x/ }, '/r', /RegExp/],
    ['a class instance', { c: new (class Point {})() }, '/c', /class instance/],
    ['a boxed number', { b: Object(1) as unknown }, '/b', /boxed/],
    ['a boxed string', { b: Object('s') as unknown }, '/b', /boxed/],
    ['a sparse array', { s: sparse() }, '/s/1', /sparse/],
    ['an enumerable symbol key', { o: { [Symbol('k')]: 1 } }, '/o', /symbol/],
    ['a named property on an array', { a: Object.assign([1], { extra: 2 }) }, '/a/extra', /named property/],
  ])('rejects %s with a path', (_name, value, path, message) => {
    const r = rejection(value)
    expect(r.path).toBe(path)
    expect(r.message).toMatch(message)
  })

  test('escapes path segments as JSON pointers', () => {
    expect(rejection({ 'a/b': { 'c~d': undefined } }).path).toBe('/a~1b/c~0d')
  })

  test('rejects cycles but shares a DAG', () => {
    const cyclic: Record<string, unknown> = { list: [] }
    ;(cyclic.list as unknown[]).push(cyclic)
    expect(rejection(cyclic)).toEqual({ path: '/list/0', message: expect.stringMatching(/cyclic/) as unknown })
    const shared = { x: 1 }
    const result = snapshotJson({ a: shared, b: [shared] })
    expect(result).toEqual({ ok: true, value: { a: { x: 1 }, b: [{ x: 1 }] } })
  })

  test('reads every property exactly once', () => {
    let reads = 0
    const source = {
      get flaky() {
        reads++
        return reads === 1 ? 'first' : 'second'
      },
    }
    const result = snapshotJson(source)
    expect(result).toEqual({ ok: true, value: { flaky: 'first' } })
    expect(reads).toBe(1)
    let lengthReads = 0
    const array = new Proxy([1, 2], {
      get(target, key, receiver) {
        if (key === 'length') lengthReads++
        return Reflect.get(target, key, receiver) as unknown
      },
    })
    expect(snapshotJson(array)).toEqual({ ok: true, value: [1, 2] })
    expect(lengthReads).toBe(1)
  })

  test('turns throwing getters, throwing traps and revoked proxies into rejections', () => {
    const throwing = {
      get bad(): number {
        throw new Error('boom')
      },
    }
    expect(rejection({ x: throwing })).toEqual({ path: '/x/bad', message: expect.stringMatching(/boom/) as unknown })
    const trap = new Proxy(
      {},
      {
        ownKeys: () => {
          throw new Error('trap')
        },
      },
    )
    expect(rejection([trap])).toMatchObject({ path: '/0', message: expect.stringMatching(/trap/) as unknown })
    const { proxy, revoke } = Proxy.revocable({}, {})
    revoke()
    expect(rejection({ p: proxy }).path).toBe('/p')
  })

  test('accepts null-prototype objects and ignores non-enumerable and non-enumerable symbol keys', () => {
    const bare = Object.create(null) as Record<string, unknown>
    bare.a = 1
    Object.defineProperty(bare, 'hidden', { value: undefined, enumerable: false })
    Object.defineProperty(bare, Symbol('s'), { value: 1, enumerable: false })
    const result = snapshotJson(bare)
    expect(result).toEqual({ ok: true, value: { a: 1 } })
    if (result.ok) expect(Object.getPrototypeOf(result.value)).toBe(Object.prototype)
  })

  test('treats __proto__ as an ordinary own key', () => {
    const source = JSON.parse('{"__proto__": {"polluted": true}, "a": 1}') as object
    const result = snapshotJson(source)
    expect(result.ok).toBe(true)
    if (!result.ok) return
    const value = result.value as Record<string, unknown>
    expect(Object.getPrototypeOf(value)).toBe(Object.prototype)
    expect(Object.hasOwn(value, '__proto__')).toBe(true)
    expect(value['__proto__']).toEqual({ polluted: true })
    expect(({} as Record<string, unknown>).polluted).toBeUndefined()
  })

  test('handles a 100 000-deep nested array without overflowing the stack', () => {
    let deep: unknown = 'leaf'
    for (let i = 0; i < 100_000; i++) deep = [deep]
    const result = snapshotJson(deep)
    expect(result.ok).toBe(true)
    let bad: unknown = undefined
    for (let i = 0; i < 100_000; i++) bad = { k: bad }
    expect(rejection(bad).path.length).toBe(100_000 * 2)
  })

  test('snapshotJsonOrThrow throws NotJsonError with the path', () => {
    expect(snapshotJsonOrThrow([1])).toEqual([1])
    try {
      snapshotJsonOrThrow({ a: [undefined] })
      expect.unreachable()
    } catch (error) {
      expect(error).toBeInstanceOf(NotJsonError)
      expect(error).toMatchObject({ code: 'NOT_JSON', path: '/a/0' })
    }
  })
})

describe('adoptParsedJson', () => {
  test('freezes JSON.parse output in place, equal to what a snapshot would copy, and snapshots of it are free', () => {
    fc.assert(
      fc.property(losslessJson, (value) => {
        const parsed = JSON.parse(JSON.stringify(value)) as JsonValue
        const adopted = adoptParsedJson(parsed)
        expect(adopted).toBe(parsed)
        expect(isDeepFrozen(adopted)).toBe(true)
        expect(adopted).toEqual(snapshotJsonOrThrow(JSON.parse(JSON.stringify(value))))
        const again = snapshotJson(adopted)
        expect(again.ok && again.value).toBe(adopted)
      }),
    )
  })

  test('the mark of a materialized value is invisible and cannot be copied or forged', () => {
    const adopted = adoptParsedJson(JSON.parse('{"a":[1,{"b":2}]}') as JsonValue) as Record<string, unknown>
    const made = snapshotJsonOrThrow({ a: [1, { b: 2 }] }) as Record<string, unknown>
    for (const value of [adopted, made]) {
      expect(Reflect.ownKeys(value)).toEqual(['a'])
      expect(Object.getOwnPropertyDescriptors(value)).toEqual({
        a: { value: value['a'], writable: false, enumerable: true, configurable: false },
      })
      expect(JSON.stringify(value)).toBe('{"a":[1,{"b":2}]}')
      // Taken as it is; a copy of it (structuredClone, a spread, a proxy over it) is copied again.
      expect(snapshotJson(value)).toEqual({ ok: true, value })
      for (const copy of [structuredClone(value), Object.freeze({ ...value }), new Proxy(value, {})]) {
        const again = snapshotJson(copy)
        expect(again.ok && again.value).not.toBe(copy)
        expect(again.ok && again.value).toEqual(value)
      }
    }
  })

  test('__proto__ stays an own data key, as a snapshot keeps it', () => {
    const adopted = adoptParsedJson(JSON.parse('{"__proto__":{"x":1},"a":[{"b":2}]}') as JsonValue) as Record<
      string,
      unknown
    >
    expect(Object.getPrototypeOf(adopted)).toBe(Object.prototype)
    expect(Object.keys(adopted)).toEqual(['__proto__', 'a'])
    expect(Object.isFrozen((adopted['a'] as unknown[])[0])).toBe(true)
    expect(adopted).toEqual(snapshotJsonOrThrow(JSON.parse('{"__proto__":{"x":1},"a":[{"b":2}]}')))
  })
})

/** An array nesting `[a, a]` `levels` times around one string: small in memory, 2^levels copies as text. */
function doubling(levels: number, leaf: JsonValue = 'leaf'): JsonValue {
  let value: JsonValue = [leaf]
  for (let i = 0; i < levels; i++) value = [value, value]
  return value
}

/** JSON values without numbers (whose count is one digit each) and whose strings need no escapes: counted exactly. */
const plainJson = fc
  .jsonValue({ maxDepth: 4 })
  .map((v) => JSON.parse(JSON.stringify(v, (_k, x: unknown) => (typeof x === 'number' ? null : x))) as JsonValue)
  .filter((v) => !JSON.stringify(v).includes('\\'))

describe("the length of a value's JSON text", () => {
  test('a value is refused only past the bound: exactly at its JSON text when it has no numbers or escapes', () => {
    fc.assert(
      fc.property(plainJson, (value) => {
        const chars = JSON.stringify(value).length
        expect(_snapshotOnce(value, chars)).toEqual({ ok: true, value })
        expect(_snapshotOnce(value, chars - 1)).toMatchObject({ ok: false, tooLong: chars })
      }),
    )
  })

  test('never refuses a value whose JSON text fits (numbers and escapes only make the text longer than counted)', () => {
    fc.assert(
      fc.property(losslessJson, (value) => {
        expect(_snapshotOnce(value, JSON.stringify(value).length).ok).toBe(true)
      }),
    )
  })

  test('a shared node counts as often as it is reached: a graph of 41 nodes whose text would be 2^40 copies is refused at once', () => {
    expect(_snapshotOnce(doubling(10), JSON.stringify(doubling(10)).length)).toMatchObject({ ok: true })
    const refused = _snapshotOnce(doubling(40), 1_000_000)
    expect(refused).toMatchObject({
      ok: false,
      message: expect.stringMatching(/^its JSON text is at least \d+ characters, more than the 1000000 this accepts$/),
    })
    expect(refused.ok === false && 'tooLong' in refused && refused.tooLong).toBeGreaterThan(1_000_000)
    // Without a bound of its own, a snapshot stops at MAX_JSON_CHARS.
    expect(snapshotJson(doubling(40))).toMatchObject({
      ok: false,
      message: expect.stringContaining(`more than the ${MAX_JSON_CHARS} this accepts`),
    })
  })

  test('a string is measured before anything is copied; a materialized value by the count it was made with', () => {
    expect(_snapshotOnce('x'.repeat(10), 12)).toEqual({ ok: true, value: 'x'.repeat(10) })
    expect(_snapshotOnce('x'.repeat(11), 12)).toMatchObject({ ok: false, path: '', tooLong: 13 })
    const made = snapshotJsonOrThrow(doubling(8))
    const chars = JSON.stringify(made).length
    expect(_snapshotOnce(made, chars)).toMatchObject({ ok: true, value: made })
    expect(_snapshotOnce(made, chars - 1)).toMatchObject({ ok: false, tooLong: chars })
    expect(_snapshotOnce({ inner: made }, chars)).toMatchObject({ ok: false, path: '/inner' })
  })

  test('a parsed tree (never counted) is measured where it is shared, and against a caller bound', () => {
    const text = JSON.stringify({ rows: Array.from({ length: 100 }, (_, i) => ({ id: `row-${i}` })) })
    const parsed = () => adoptParsedJson(JSON.parse(text) as JsonValue)
    // Shared 2^30 times inside a new value: counted each time, refused long before the text.
    expect(_snapshotOnce(doubling(30, parsed()), 10_000_000)).toMatchObject({ ok: false, tooLong: expect.any(Number) })
    expect(_snapshotOnce([parsed(), parsed()], 2 * text.length + 3)).toMatchObject({ ok: true })
    expect(_snapshotOnce([parsed(), parsed()], 2 * text.length + 2)).toMatchObject({
      ok: false,
      tooLong: 2 * text.length + 3,
    })
    // Returned as it is: measured against a caller's bound, passed as it is under MAX_JSON_CHARS.
    expect(_snapshotOnce(parsed(), text.length)).toMatchObject({ ok: true })
    expect(_snapshotOnce(parsed(), text.length - 1)).toMatchObject({ ok: false, tooLong: text.length })
  })
})
