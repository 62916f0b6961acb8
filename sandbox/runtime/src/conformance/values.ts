import { expect } from 'vitest'
import { MAX_VALUE_DEPTH } from '../prelude/protocol.js'
import type { SuiteContext } from './context.js'
import type { JsonValue } from '../types.js'

/** Completion values, invalid output, syntax and runtime errors with positions, logs. */
export function valueTests(s: SuiteContext): void {
  s.it('a program that returns undefined has no value', async () => {
    const r = await s.run('const x = 1')
    expect(r.error).toBeUndefined()
    expect('value' in r).toBe(false)
    const r2 = await s.run('return undefined')
    expect('value' in r2).toBe(false)
  })

  s.it('null is an explicit value', async () => {
    const r = await s.run('return null')
    expect(r.error).toBeUndefined()
    expect('value' in r).toBe(true)
    expect(r.value).toBeNull()
  })

  s.it('strings and nested JSON come back as copies', async () => {
    expect((await s.run('return "héllo 😀"')).value).toBe('héllo 😀')
    const r = await s.run('return { a: [1, 2.5, { b: null, c: true }], ["__proto__"]: { d: "x" }, e: -1e21 }')
    expect(r.error).toBeUndefined()
    expect(JSON.stringify(r.value)).toBe('{"a":[1,2.5,{"b":null,"c":true}],"__proto__":{"d":"x"},"e":-1e+21}')
    expect(Object.getPrototypeOf(r.value)).not.toEqual({ d: 'x' })
  })

  s.it('top-level await and return work', async () => {
    const r = await s.run('const v = await Promise.resolve(41)\nif (v) return v + 1\nreturn 0')
    expect(r.value).toBe(42)
  })

  s.it('a non-JSON completion value is invalid-output', async () => {
    const bad = [
      'return { a: undefined }',
      'return () => 1',
      'return NaN',
      'return -0',
      'return Infinity',
      'return 1n',
      'return Symbol("s")',
      'const a = []; a.push(a); return a',
      'return new Map()',
      'return [1, , 3]',
      'return new Date(0)',
      'class A {}; return new A()',
      'return [undefined]',
    ]
    for (const code of bad) {
      const r = await s.run(code)
      expect(r.error?.kind, code).toBe('invalid-output')
      expect('value' in r, code).toBe(false)
    }
    // The prelude words it, the same on every backend: where the value breaks JSON, and how.
    expect((await s.run('return NaN')).error).toEqual({
      kind: 'invalid-output',
      message: 'the return value is not a finite number',
    })
    expect((await s.run('return { a: [1, () => 1] }')).error).toEqual({
      kind: 'invalid-output',
      message: 'the return value.a[1] is a function',
    })
  })

  s.it('a return value is its JSON text whether it is one small container of scalars or not', async () => {
    const shapes = [
      '{ n: 1, s: "x", t: true, z: null }',
      '[1.5, -2, "three"]',
      '{ s: "y".repeat(3000), n: 2 }',
      '{ a: 1, b: [2, { c: 3 }] }',
      'Array.from({ length: 65 }, (_, i) => i)',
    ]
    for (const shape of shapes) {
      const r = await s.run(`const v = ${shape}; return [JSON.stringify(v), v]`)
      const [text, value] = r.value as [string, JsonValue]
      expect(JSON.stringify(value), shape).toBe(text)
    }
    expect((await s.run('return { a: 1, b: NaN }')).error).toEqual({
      kind: 'invalid-output',
      message: 'the return value.b is not a finite number',
    })
    expect((await s.run('return [1, 2, , 4]')).error).toEqual({
      kind: 'invalid-output',
      message: 'the return value[2] is a hole in a sparse array',
    })
    expect((await s.run('return { s: "y".repeat(2000), f() {} }')).error).toEqual({
      kind: 'invalid-output',
      message: 'the return value.f is a function',
    })
  })

  s.it('an invalid-output path names a long key by its head and a deep path by its ends, not whole', async () => {
    // A key of five million characters (the program's choice) was the message, and crossed to the host to be cut.
    const long = await s.run(`return { ok: 1, ['k'.repeat(5e6) + 'z']: () => 1 }`)
    expect(long.error).toEqual({
      kind: 'invalid-output',
      message: `the return value.${'k'.repeat(64)}\u2026(5000001 characters) is a function`,
    })
    // A key cut inside a surrogate pair keeps the pair whole or drops it, never half of it.
    const pair = await s.run(`return { ['k'.repeat(63) + '\\u{1F600}' + 'x'.repeat(100)]: undefined }`)
    expect(pair.error).toEqual({
      kind: 'invalid-output',
      message: `the return value.${'k'.repeat(63)}\u2026(165 characters) is undefined`,
    })
    // 40 levels: the first and last 16 shown, the 8 between counted.
    const deep = await s.run(`let v = { bad: 1n }; for (let i = 39; i >= 1; i--) v = { ['level' + i]: v }; return v`)
    const levels = (from: number, to: number): string =>
      Array.from({ length: to - from + 1 }, (_, i) => `.level${from + i}`).join('')
    expect(deep.error).toEqual({
      kind: 'invalid-output',
      message: `the return value${levels(1, 16)}\u2026(8 levels)\u2026${levels(25, 39)}.bad is a bigint`,
    })
    // The same words for a sub-call's arguments, which the program can catch.
    const args = await s.run(
      `try { await tools.echo({ ['a'.repeat(1e6)]: 1n }) } catch (e) { return [e.code, e.message.length < 300, e.message.includes('(1000000 characters) is a bigint')] }`,
      { bindings: ['echo'] },
    )
    expect(args.value).toEqual(['INVALID_ARGS', true, true])
  })

  s.it(
    `a value nested deeper than MAX_VALUE_DEPTH (${MAX_VALUE_DEPTH}) is invalid-output; one at the bound comes back`,
    async () => {
      const nest = (depth: number): string => `let v = []; for (let i = 1; i < ${depth}; i++) v = { a: [v] }; return v`
      const deep = await s.run(nest(100_000))
      expect(deep.error).toEqual({
        kind: 'invalid-output',
        message: `the return value is nested more than ${MAX_VALUE_DEPTH} levels deep`,
      })
      expect('value' in deep).toBe(false)
      // Each step nests two levels (an object, then an array).
      const fits = await s.run(nest(MAX_VALUE_DEPTH / 2))
      expect(fits.error).toBeUndefined()
      expect(JSON.stringify(fits.value).length).toBeGreaterThan(MAX_VALUE_DEPTH)
      const over = await s.run(nest(MAX_VALUE_DEPTH / 2 + 1))
      expect(over.error?.kind).toBe('invalid-output')
    },
  )

  s.it(
    'a program that nests or recurses too deeply for the engine fails as an exception that says so, and the next run works',
    async () => {
      const programs = [
        `JSON.parse('['.repeat(100000) + ']'.repeat(100000))`,
        'let a = []; for (let i = 0; i < 100000; i++) a = [a]; JSON.stringify(a)',
        'let a = []; for (let i = 0; i < 100000; i++) a = [a]; String(a)',
        `eval('('.repeat(20000) + '1' + ')'.repeat(20000))`,
        'function f() { return f() + 1 } f()',
      ]
      for (const code of programs) {
        const r = await s.run(code, { language: 'javascript' })
        // An engine that does not recurse there (isolated-vm's JSON.parse) completes; none may call it a crash.
        if (r.error !== undefined) {
          expect(r.error.kind, code).toBe('exception')
          expect(r.error.message, code).toMatch(/stack/i)
        }
        expect((await s.run('return 1')).value, code).toBe(1)
      }
    },
  )

  s.it('a syntax error reports the line and column of the model code (JavaScript)', async () => {
    const r = await s.run('const a = 1\nconst b = 2 +* 3\nreturn a', { language: 'javascript' })
    expect(r.error?.kind).toBe('syntax')
    expect(r.error?.message).toMatch(/line 2, column \d+/)
  })

  s.it('a syntax error reports the line and column of the model code (TypeScript)', async () => {
    const r = await s.run('const a: number = 1\nconst b: string = )\nreturn a')
    expect(r.error?.kind).toBe('syntax')
    expect(r.error?.message).toMatch(/line 2, column \d+/)
  })

  s.it('an import statement fails saying that programs cannot import and that tools are on `tools`', async () => {
    for (const code of [
      "import fs from 'fs'\nreturn fs.readFileSync('a')",
      "import { z } from 'zod'\nreturn 1",
      "const a: number = 1\n  import * as m from 'm'",
    ]) {
      const r = await s.run(code)
      expect(r.error?.kind, code).toBe('syntax')
      expect(r.error?.message, code).toMatch(
        /^SyntaxError: programs cannot import modules; every tool is already an async function on `tools`/,
      )
      expect(r.error?.message, code).toMatch(
        code.startsWith('const') ? /\(line 2, column 3\)$/ : /\(line 1, column 1\)$/,
      )
    }
    const dynamic = await s.run("try { await import('fs') } catch { return 'rejected' }")
    expect(dynamic.value).toBe('rejected')
  })

  s.it('require, timers, fetch and process are absent, and the ReferenceError says what to use instead', async () => {
    const cases: [string, RegExp][] = [
      [
        "const fs = require('fs')",
        /^ReferenceError: '?require'? is not defined: programs cannot load modules; every tool is an async function on `tools`/,
      ],
      [
        'setTimeout(() => 1, 10)',
        /^ReferenceError: '?setTimeout'? is not defined: there are no timers in the sandbox; await the tool calls/,
      ],
      [
        "await fetch('https://example.com')",
        /^ReferenceError: '?fetch'? is not defined: there is no network in the sandbox; reach services through the tools/,
      ],
      ['return process.env.HOME', /^ReferenceError: '?process'? is not defined: there is no process in the sandbox/],
    ]
    for (const [code, message] of cases) {
      const r = await s.run(code)
      expect(r.error?.kind, code).toBe('exception')
      expect(r.error?.message, code).toMatch(message)
      expect(r.error?.message, code).toMatch(/\(line 1, column \d+\)$/)
    }
    // Only those names: another ReferenceError keeps its message, and the globals stay absent.
    expect((await s.run('return nope')).error?.message).toMatch(/^ReferenceError: '?nope'? is not defined \(line 1/)
    expect((await s.run("return [typeof require, typeof fetch, 'process' in globalThis]")).value).toEqual([
      'undefined',
      'undefined',
      false,
    ])
  })

  s.it('a thrown error reports the line and column of the model code (JavaScript)', async () => {
    const r = await s.run('const a = 1\nawait null\n  null.x', { language: 'javascript' })
    expect(r.error?.kind).toBe('exception')
    expect(r.error?.message).toMatch(/TypeError/)
    const m = /line (\d+), column (\d+)/.exec(r.error?.message ?? '')
    expect(m?.[1]).toBe('3')
    expect(Number(m?.[2])).toBeGreaterThanOrEqual(3)
    expect(Number(m?.[2])).toBeLessThanOrEqual(8)
  })

  s.it('a thrown error reports the line and column of the model code (TypeScript)', async () => {
    const code =
      'interface A { x: number }\nconst a: A = { x: 1 }\nconst b: A | null = null as A | null;   throw new Error("boom " + (a.x as number))'
    const r = await s.run(code)
    expect(r.error?.kind).toBe('exception')
    expect(r.error?.message).toMatch(/^Error: boom 1/)
    const m = /line (\d+), column (\d+)/.exec(r.error?.message ?? '')
    expect(m?.[1]).toBe('3')
    // The throw starts at column 41 of the model's line; engines point somewhere inside the statement.
    expect(Number(m?.[2])).toBeGreaterThanOrEqual(41)
    expect(Number(m?.[2])).toBeLessThanOrEqual(code.split('\n')[2]?.length ?? 0)
  })

  s.it('a thrown non-error value is reported', async () => {
    const r = await s.run('throw { code: 7 }')
    expect(r.error?.kind).toBe('exception')
    expect(r.error?.message).toContain('code: 7')
  })

  s.it(
    'a failure message longer than maxOutputBytes is cut to it: thrown by the program, a tool error it rethrows, an invalid-output path',
    async () => {
      const limits = { maxOutputBytes: 2000 }
      const fail = async (): Promise<JsonValue> => {
        throw new Error('t'.repeat(1_000_000))
      }
      for (const [code, head] of [
        ['throw new Error("x".repeat(5e6))', 'Error: xxx'],
        ['throw "y".repeat(5e6)', 'Uncaught "yyy'],
        ['await tools.fail({})', 'ToolCallError: ttt'],
        // The path is shown shortened (32 levels, 64 characters of a key), still longer than this budget.
        [
          'let v = () => 1; for (let i = 0; i < 40; i++) v = { ["k".repeat(100) + i]: v }; return v',
          'the return value.kkk',
        ],
      ] as const) {
        const r = await s.run(code, { limits, call: fail })
        expect(r.error?.kind, code).toBe(code.includes('return') ? 'invalid-output' : 'exception')
        expect(r.error?.message.startsWith(head), code).toBe(true)
        expect(r.error?.message, code).toMatch(
          / … \(cut to 2000 bytes, the run's maxOutputBytes, from \d+ characters\)$/,
        )
        expect(Buffer.byteLength(r.error?.message ?? '', 'utf8'), code).toBeLessThanOrEqual(2000)
      }
      // The guest keeps only the head of a message this long (GuestErrorInfo.cutChars): the note counts it whole
      // (`Uncaught "` and the closing quote around the thrown string).
      expect((await s.run('throw "y".repeat(5e6)', { limits })).error?.message).toMatch(/from 5000011 characters\)$/)
    },
  )

  s.it('logs keep their order, one entry per console call', async () => {
    const r = await s.run(
      'console.log("a", 1)\nconsole.info("b")\nawait tools.echo({})\nconsole.warn("c")\nconsole.error("d")\nconsole.debug("e")\nreturn 1',
    )
    expect(r.logs).toEqual(['a 1', 'b', 'c', 'd', 'e'])
  })

  s.it('console formats values readably', async () => {
    const r = await s.run(
      'console.log({ a: 1, b: "x", c: [1, 2], d: null, e: undefined }, [1, "two"], -0, 1n, undefined, () => 1, new Error("bad"))',
    )
    expect(r.logs).toHaveLength(1)
    const line = r.logs[0] ?? ''
    expect(line).toContain('a: 1')
    expect(line).toContain('b: "x"')
    expect(line).toContain('[ 1, 2 ]')
    expect(line).toContain('-0')
    expect(line).toContain('1n')
    expect(line).toContain('undefined')
    expect(line).toContain('[Function')
    expect(line).toContain('Error: bad')
  })

  s.it('logs made before a failure are kept', async () => {
    const r = await s.run('console.log("before")\nthrow new Error("x")')
    expect(r.error?.kind).toBe('exception')
    expect(r.logs).toEqual(['before'])
  })
}
