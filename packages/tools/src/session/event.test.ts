import { describe, expect, test } from 'vitest'
import { encodeEvent, snapshotEvent } from './event.js'

const base = { type: 't', time: 1 }

describe('snapshotEvent', () => {
  test('returns a deep-frozen copy equal to the event', () => {
    const event = { ...base, turn: 2, nested: { list: [1, 'a', null, true, { x: 0 }] } }
    const copy = snapshotEvent(event)
    expect(copy).toEqual(event)
    expect(copy).not.toBe(event)
    expect(copy.nested).not.toBe(event.nested)
    expect(Object.isFrozen(copy)).toBe(true)
    expect(Object.isFrozen((copy.nested as { list: unknown[] }).list[4])).toBe(true)
  })

  test('keeps key order and a `__proto__` key as own data', () => {
    const event = JSON.parse('{"type":"t","time":1,"b":1,"__proto__":{"polluted":true},"a":2}') as typeof base
    const copy = snapshotEvent(event)
    expect(Object.keys(copy)).toEqual(['type', 'time', 'b', '__proto__', 'a'])
    expect(Object.getPrototypeOf(copy)).toBe(Object.prototype)
    expect(JSON.stringify(copy)).toBe('{"type":"t","time":1,"b":1,"__proto__":{"polluted":true},"a":2}')
  })

  test('reads every property exactly once', () => {
    let reads = 0
    const event = {
      ...base,
      get flaky() {
        reads++
        return reads
      },
    }
    expect(snapshotEvent(event).flaky).toBe(1)
    expect(reads).toBe(1)
  })

  test('accepts null-prototype objects and very deep nesting without recursion', () => {
    const bare = Object.assign(Object.create(null) as Record<string, unknown>, base)
    expect(snapshotEvent(bare)).toEqual(base)
    let deep: unknown = 0
    for (let i = 0; i < 100_000; i++) deep = [deep]
    expect(() => snapshotEvent({ ...base, deep })).not.toThrow()
  })

  test.each([
    [
      'a cycle',
      () => {
        const event: Record<string, unknown> = { ...base }
        event.self = { again: event }
        return event
      },
      '/self/again: a cyclic reference is not JSON',
    ],
    ['a BigInt', () => ({ ...base, n: 1n }), '/n: a BigInt is not JSON'],
    ['a function', () => ({ ...base, f: () => 1 }), '/f: a function is not JSON'],
    ['an undefined property', () => ({ ...base, u: undefined }), '/u: undefined is not JSON'],
    ['undefined itself', () => undefined, '(root): undefined is not JSON'],
    ['a symbol', () => ({ ...base, s: Symbol('s') }), '/s: a symbol is not JSON'],
    ['NaN', () => ({ ...base, x: [NaN] }), '/x/0: NaN is not a finite number'],
    ['Infinity', () => ({ ...base, x: Infinity }), '/x: Infinity is not a finite number'],
    ['-0', () => ({ ...base, x: -0 }), '/x: -0 is not lossless JSON'],
    ['a Date', () => ({ ...base, d: new Date(0) }), '/d: a Date is not JSON'],
    ['a Map', () => ({ ...base, m: new Map() }), '/m: a Map is not JSON'],
    ['a sparse array', () => ({ ...base, a: Object.assign([1], { 2: 3 }) }), '/a/1: a sparse array (hole) is not JSON'],
    [
      'a throwing getter',
      () => ({
        ...base,
        get boom(): never {
          throw new Error('kaboom')
        },
      }),
      '/boom: the property could not be read: kaboom',
    ],
    [
      'a proxy whose trap throws',
      () => ({
        ...base,
        p: new Proxy(
          {},
          {
            ownKeys() {
              throw new Error('trap')
            },
          },
        ),
      }),
      '/p: the value could not be read: trap',
    ],
    ['a key that needs escaping', () => ({ ...base, 'a/b~c': 1n }), '/a~1b~0c: a BigInt is not JSON'],
  ])('rejects %s with NOT_JSON and the path', (_name, make, message) => {
    expect(() => snapshotEvent(make())).toThrow(
      expect.objectContaining({ code: 'NOT_JSON', message: expect.stringContaining(message) }),
    )
  })

  test.each([
    ['an array', [1]],
    ['a string', 'x'],
    ['no type', { time: 1 }],
    ['a numeric type', { type: 1, time: 1 }],
    ['no time', { type: 't' }],
    ['a string turn', { ...base, turn: '1' }],
  ])('rejects %s with INVALID_EVENT', (_name, event) => {
    expect(() => snapshotEvent(event)).toThrow(expect.objectContaining({ name: 'SessionError', code: 'INVALID_EVENT' }))
  })
})

describe('encodeEvent', () => {
  test('encodes one UTF-8 line with newlines escaped', () => {
    const { line } = encodeEvent({ ...base, text: 'a\nb\u2028c\ud800é' })
    const text = line.toString('utf8')
    expect(text.endsWith('\n')).toBe(true)
    expect(text.indexOf('\n')).toBe(text.length - 1)
    expect(JSON.parse(text)).toEqual({ ...base, text: 'a\nb\u2028c\ud800é' })
  })
})
