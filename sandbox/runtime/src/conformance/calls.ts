import { expect } from 'vitest'
import type { JsonValue } from '../types.js'
import { callErrorTests } from './call-errors.js'
import { echo, sleep, type SuiteContext } from './context.js'
import { toolsObjectTests } from './tools-object.js'

/** Sub-calls: results, errors, ordering, argument copies, the `tools` object and the globals. */
export function callTests(s: SuiteContext): void {
  callErrorTests(s)

  s.it('sequential sub-calls return results in order', async () => {
    const seen: JsonValue[] = []
    const r = await s.run(
      'let sum = 0\nfor (let i = 0; i < 50; i++) sum += (await tools.echo({ i })).args.i\nreturn sum',
      {
        call: async (name, args) => {
          seen.push(args)
          return echo(name, args)
        },
      },
    )
    expect(r.value).toBe(1225)
    expect(r.stats.subCalls).toBe(50)
    expect(seen[3]).toEqual({ i: 3 })
  })

  s.it('Promise.all sub-calls run concurrently', async () => {
    let inFlight = 0
    let peak = 0
    const r = await s.run(
      'const rs = await Promise.all([0,1,2,3,4,5,6,7].map((i) => tools.slow({ i })))\nreturn rs.map((x) => x.args.i)',
      {
        call: async (name, args) => {
          inFlight++
          peak = Math.max(peak, inFlight)
          await sleep(20)
          inFlight--
          return echo(name, args)
        },
      },
    )
    expect(r.value).toEqual([0, 1, 2, 3, 4, 5, 6, 7])
    expect(peak).toBe(8)
  })

  s.it('results reach the right caller when the host resolves out of order', async () => {
    const r = await s.run(
      'const ids = Array.from({ length: 20 }, (_, i) => i)\nconst rs = await Promise.all(ids.map(async (i) => (await tools.slow({ i })).args.i * 10))\nreturn rs',
      {
        call: async (name, args) => {
          const i = (args as { i: number }).i
          await sleep((20 - i) * 3 + (i % 3) * 7)
          return echo(name, args)
        },
      },
    )
    expect(r.value).toEqual(Array.from({ length: 20 }, (_, i) => i * 10))
  })

  s.it('a non-JSON argument rejects that call only', async () => {
    let calls = 0
    const r = await s.run(
      `const out = []
      for (const bad of [undefined, () => 1, NaN, -0, 1n, [1, , 2], new Date(), { a: Symbol() }]) {
        try { await tools.echo({ bad }); out.push('called') } catch (e) { out.push(e instanceof ToolCallError) }
      }
      const cyc = {}; cyc.self = cyc
      try { await tools.echo(cyc) } catch (e) { out.push(e.message.includes('cycle')) }
      out.push((await tools.echo({ ok: 1 })).args.ok)
      return out`,
      {
        call: async (name, args) => {
          calls++
          return echo(name, args)
        },
      },
    )
    expect(r.error).toBeUndefined()
    expect(r.value).toEqual([true, true, true, true, true, true, true, true, true, 1])
    expect(calls).toBe(1)
  })

  s.it('omitted arguments are an empty object; each property is read once', async () => {
    const got: JsonValue[] = []
    const r = await s.run(
      `await tools.echo()
      let n = 0
      const o = { get v() { n++; return n } }
      await tools.echo(o)
      return n`,
      { call: async (name, args) => (got.push(args), echo(name, args)) },
    )
    expect(got).toEqual([{}, { v: 1 }])
    expect(r.value).toBe(1)
  })

  s.it(
    'arguments of every shape arrive as the JSON text of what the program passed; each property is read once',
    async () => {
      const got: JsonValue[] = []
      const r = await s.run(
        `const wide = {}
      for (let i = 0; i < 300; i++) wide['key' + i + (i % 7 === 0 ? '"\\\\' : '')] = i
      const cases = [
        {}, [], { n: 1 }, [1, 'two', true, null, -1.5e-7, 1e21],
        { 'a"b': 1, '\\u2028': 'x', ['__proto__']: 2 },
        { ['k'.repeat(100)]: 1 },
        { s: 'y'.repeat(5000), t: 1 },
        { a: 1, b: [2, { c: 3 }], d: 'e' },
        Array.from({ length: 64 }, (_, i) => i),
        Array.from({ length: 65 }, (_, i) => i),
        wide,
      ]
      const texts = []
      for (const c of cases) { texts.push(JSON.stringify(c)); await tools.echo(c) }
      let reads = 0
      await tools.echo({ get a() { reads++; return 1 }, b: { c: 2 }, get d() { reads++; return 'x' } })
      // A proxy's traps run once each, whichever way the value goes.
      const traps = { getPrototypeOf: 0, ownKeys: 0 }
      const counted = (target) => new Proxy(target, {
        getPrototypeOf(t) { traps.getPrototypeOf++; return Reflect.getPrototypeOf(t) },
        ownKeys(t) { traps.ownKeys++; return Reflect.ownKeys(t) },
      })
      await tools.echo(counted({ p: 1 }))
      await tools.echo(counted(Object.fromEntries(Array.from({ length: 70 }, (_, i) => ['k' + i, i]))))
      try { await tools.echo(counted(Object.create({ inherited: 1 }))) } catch {}
      reads += traps.getPrototypeOf * 100 + traps.ownKeys * 10000
      const errors = []
      const bad = [[1, , 3], { a: 1, b: NaN }, { a: [1, 2, { c: -0 }] }, [...Array(70).fill(1), undefined], { s: 'y'.repeat(2000), u: undefined }]
      const cyclic = { a: 1 }
      cyclic.self = cyclic
      bad.push(cyclic)
      for (const b of bad) {
        try { await tools.echo(b); errors.push('sent') } catch (e) { errors.push(e.code + ': ' + e.message) }
      }
      return { texts, reads, errors }`,
        { call: async (name, args) => (got.push(args), echo(name, args)) },
      )
      expect(r.error).toBeUndefined()
      const { texts, reads, errors } = r.value as { texts: string[]; reads: number; errors: string[] }
      expect(got.slice(0, texts.length).map((v) => JSON.stringify(v))).toEqual(texts)
      expect(got[texts.length]).toEqual({ a: 1, b: { c: 2 }, d: 'x' })
      // Two getters, three prototypes and two key lists (the third proxy is refused at its prototype).
      expect(reads).toBe(2 + 3 * 100 + 2 * 10000)
      expect(got).toHaveLength(texts.length + 3)
      const invalid = (what: string): string => `INVALID_ARGS: arguments are not lossless JSON: arguments${what}`
      expect(errors).toEqual([
        invalid('[1] is a hole in a sparse array'),
        invalid('.b is not a finite number'),
        invalid('.a[2].c is -0'),
        invalid('[70] is undefined'),
        invalid('.u is undefined'),
        invalid('.self is a cycle'),
      ])
    },
  )

  s.it('patched intrinsics cannot corrupt the bridge', async () => {
    const got: JsonValue[] = []
    const r = await s.run(
      `JSON.stringify = () => '"pwned"'
      JSON.parse = () => 'pwned'
      Object.prototype.toJSON = function () { return 'pwned' }
      Array.prototype.toJSON = function () { return 'pwned' }
      Object.defineProperty(Array.prototype, '0', { set() { throw new Error('setter') }, configurable: true })
      Object.keys = () => []
      Array.isArray = () => false
      const r = await tools.echo({ a: [1, { b: 2 }], s: 'x' })
      return { r: r.args, v: [3, 4] }`,
      { call: async (name, args) => (got.push(args), echo(name, args)) },
    )
    expect(got).toEqual([{ a: [1, { b: 2 }], s: 'x' }])
    expect(r.error).toBeUndefined()
    expect(r.value).toEqual({ r: { a: [1, { b: 2 }], s: 'x' }, v: [3, 4] })
  })

  s.it('accessors a program puts on Object.prototype do not break ToolCallError', async () => {
    const r = await s.run(
      `Object.prototype.get = () => 'pwned'
      Object.prototype.set = () => {}
      const out = []
      try { await tools.fail({}) } catch (e) { out.push([e instanceof ToolCallError, e.name, e.toolName, e.code, e.message, e.details]) }
      const own = new ToolCallError('x', 'mine', 'DENIED', { a: 1 })
      out.push([own.code, own.details, Object.keys(own)])
      return out`,
      { call: () => Promise.reject(Object.assign(new Error('no'), { code: 'DENIED', details: [1] })) },
    )
    expect(r.error).toBeUndefined()
    expect(r.value).toEqual([
      [true, 'ToolCallError', 'fail', 'DENIED', 'no', [1]],
      ['DENIED', { a: 1 }, ['toolName', 'code', 'details']],
    ])
  })

  toolsObjectTests(s)

  s.it('the guest has no host capabilities', async () => {
    const r = await s.run(
      `const names = ['process', 'require', 'fetch', 'setTimeout', 'setInterval', 'setImmediate', 'queueMicrotask',
        'WebAssembly', 'SharedArrayBuffer', 'Atomics', 'Buffer', 'module', 'exports', 'performance', 'global', 'os', 'std']
      const present = names.filter((n) => typeof globalThis[n] !== 'undefined')
      let dynamicImport = 'no error'
      try { await import('fs'); dynamicImport = 'imported' } catch (e) { dynamicImport = 'rejected' }
      let fnEscape
      try { fnEscape = tools.echo.constructor.constructor('return typeof process')() } catch (e) { fnEscape = 'threw' }
      return { present, dynamicImport, fnEscape, hasTools: typeof tools, hasErr: typeof ToolCallError, hasConsole: typeof console }`,
    )
    expect(r.error).toBeUndefined()
    expect(r.value).toEqual({
      present: [],
      dynamicImport: 'rejected',
      fnEscape: 'undefined',
      hasTools: 'object',
      hasErr: 'function',
      hasConsole: 'object',
    })
  })
}
