import { expect } from 'vitest'
import type { JsonValue } from '../types.js'
import { MAX_RESULT_DEPTH } from '../host-calls.js'
import { MAX_VALUE_DEPTH } from '../prelude/protocol.js'
import { echo, sleep, type SuiteContext } from './context.js'

/** Sub-calls: results, errors, ordering, argument copies, the `tools` object and the globals. */
export function callTests(s: SuiteContext): void {
  s.it('a host rejection becomes a ToolCallError in the guest', async () => {
    const call = async (name: string): Promise<JsonValue> => {
      throw new Error(`no ${name} today`)
    }
    const r = await s.run(
      `try { await tools.fail({ x: 1 }) } catch (e) {
        return [e instanceof ToolCallError, e instanceof Error, e.name, e.toolName, e.message, Object.keys(e).includes('cause')]
      }`,
      { call },
    )
    expect(r.error).toBeUndefined()
    expect(r.value).toEqual([true, true, 'ToolCallError', 'fail', 'no fail today', false])
  })

  s.it(
    'a rejection carries its stable code and JSON details into ToolCallError; nothing else of the host error crosses',
    async () => {
      const withCode = (code: unknown, details?: unknown): Error =>
        Object.assign(new Error(`code ${String(code)}`), { code, details, secret: 'host' })
      const call = async (name: string, args: JsonValue): Promise<JsonValue> => {
        const i = (args as { i: number }).i
        if (i === 0) throw withCode('DENIED', { rule: 'no-refunds', limits: [1, 2] })
        if (i === 1) throw withCode('TOOL_TIMEOUT')
        if (i === 2) throw new Error('plain')
        if (i === 3) throw withCode('not a code')
        if (i === 4) throw withCode('TOOL_ERROR', { n: 1n })
        if (i === 5)
          throw Object.defineProperty(new Error('getter'), 'code', {
            get: () => {
              throw new Error('boom')
            },
          })
        return name
      }
      const r = await s.run(
        `const out = []
      for (let i = 0; i < 6; i++) {
        try { await tools.fail({ i }) } catch (e) { out.push([e.code, e.details === undefined ? null : e.details, 'secret' in e, e instanceof ToolCallError]) }
      }
      try { await tools.fail({ f: () => 1 }) } catch (e) { out.push([e.code, e.message.slice(0, 30)]) }
      const own = new ToolCallError('x', 'mine')
      out.push([own.code, 'details' in own, new ToolCallError('x', 'y', 'DENIED', { a: 1 }).details])
      return out`,
        { call },
      )
      expect(r.error).toBeUndefined()
      expect(r.value).toEqual([
        ['DENIED', { rule: 'no-refunds', limits: [1, 2] }, false, true],
        ['TOOL_TIMEOUT', null, false, true],
        ['TOOL_ERROR', null, false, true],
        ['TOOL_ERROR', null, false, true],
        ['TOOL_ERROR', null, false, true],
        ['TOOL_ERROR', null, false, true],
        ['INVALID_ARGS', 'arguments are not lossless JSO'],
        ['TOOL_ERROR', false, { a: 1 }],
      ])
    },
  )

  s.it(
    'a rejection the program leaves unhandled (a failed call fired and forgotten) does not fail the run',
    async () => {
      const call = async (name: string): Promise<JsonValue> => {
        if (name === 'fail') throw new Error('nope')
        await sleep(20)
        return null
      }
      for (const [code, value] of [
        ['tools.fail({})\nawait tools.slow({})\nreturn 1', 1],
        ['tools.fail({}).then((v) => v)\nawait tools.slow({})\nreturn 2', 2],
        ['tools.echo({ f: () => 1 })\nawait tools.slow({})\nreturn 3', 3],
        [
          'await tools.slow({})\nnew Promise((_, reject) => reject(5))\nPromise.reject(new Error("x"))\nawait tools.slow({})\nreturn 4',
          4,
        ],
      ] as const) {
        const r = await s.run(code, { call })
        expect(r.error, code).toBeUndefined()
        expect(r.value).toBe(value)
      }
      const awaited = await s.run('await tools.fail({})', { call })
      expect(awaited.error?.kind).toBe('exception')
    },
  )

  s.it(
    `a host result deeper than MAX_RESULT_DEPTH (${MAX_RESULT_DEPTH}) rejects only that call; one at the bound arrives`,
    async () => {
      const nest = (depth: number): JsonValue => {
        let v: JsonValue = []
        for (let i = 1; i < depth; i++) v = [v]
        return v
      }
      const results: Record<string, JsonValue> = {
        deep: nest(100_000),
        atBound: nest(MAX_RESULT_DEPTH),
        shallow: [[[[]]]],
      }
      const r = await s.run(
        `const depthOf = (v) => { let d = 0; while (Array.isArray(v)) { v = v[0]; d++ } return d }
      let outcome
      try { outcome = depthOf(await tools.deep({})) } catch (e) { outcome = e instanceof ToolCallError ? e.message : 'other: ' + String(e) }
      return [outcome, depthOf(await tools.atBound({})), depthOf(await tools.shallow({}))]`,
        { call: async (name) => results[name] ?? null, bindings: ['deep', 'atBound', 'shallow'] },
      )
      expect(r.error).toBeUndefined()
      expect(r.value).toEqual([
        `the tool result nests more than ${MAX_RESULT_DEPTH} levels deep, more than this sandbox can receive`,
        MAX_RESULT_DEPTH,
        4,
      ])
    },
  )

  s.it(
    `arguments nested deeper than MAX_VALUE_DEPTH (${MAX_VALUE_DEPTH}) reject that call as INVALID_ARGS before the host sees it; at the bound they arrive`,
    async () => {
      const seen: number[] = []
      const depthOf = (v: JsonValue): number => {
        let d = 0
        for (let x: JsonValue | undefined = v; Array.isArray(x); x = x[0]) d++
        return d
      }
      const r = await s.run(
        `const nest = (depth) => { let v = []; for (let i = 1; i < depth; i++) v = [v]; return v }
      let outcome
      try { await tools.echo({ a: nest(100000) }); outcome = 'sent' } catch (e) { outcome = e instanceof ToolCallError ? [e.code, e.message] : 'other: ' + String(e) }
      const fits = await tools.echo(nest(${MAX_VALUE_DEPTH}))
      return [outcome, fits]`,
        { call: async (_name, args) => (seen.push(depthOf(args)), seen.length), bindings: ['echo'] },
      )
      expect(r.error).toBeUndefined()
      expect(r.value).toEqual([
        [
          'INVALID_ARGS',
          `arguments are not lossless JSON: arguments is nested more than ${MAX_VALUE_DEPTH} levels deep`,
        ],
        1,
      ])
      expect(seen).toEqual([MAX_VALUE_DEPTH])
    },
  )

  s.it('an uncaught ToolCallError fails the run as an exception', async () => {
    const r = await s.run('await tools.fail({})', { call: () => Promise.reject(new Error('nope')) })
    expect(r.error?.kind).toBe('exception')
    expect(r.error?.message).toMatch(/ToolCallError: nope/)
  })

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

  s.it('tools is a frozen null-prototype object with one function per binding', async () => {
    const r = await s.run(
      `const names = Object.keys(tools)
      const frozen = Object.isFrozen(tools)
      const proto = Object.getPrototypeOf(tools)
      let assigned = true
      try { tools.echo = 1; assigned = tools.echo === 1 } catch { assigned = false }
      const odd = (await tools['odd-name']({ q: 1 })).name
      const p = (await tools['__proto__']({})).name
      const c = (await tools.constructor({})).name
      const t = (await tools.toString({})).name
      return { names, frozen, proto: proto === null, assigned, odd, p, c, t, types: names.map((n) => typeof tools[n]) }`,
    )
    expect(r.error).toBeUndefined()
    expect(r.value).toEqual({
      names: ['echo', 'fail', 'slow', 'odd-name', '__proto__', 'constructor', 'toString'],
      frozen: true,
      proto: true,
      assigned: false,
      odd: 'odd-name',
      p: '__proto__',
      c: 'constructor',
      t: 'toString',
      types: Array(7).fill('function'),
    })
  })

  s.it(
    'a name that is not a bound tool rejects with UNKNOWN_TOOL naming the closest tools; the host is never called',
    async () => {
      let calls = 0
      const r = await s.run(
        `const out = []
      for (const name of ['get_wether', 'GET_WEATHER', 'weather', 'fs_read', 'serch', 'zzz']) {
        try { await tools[name]({ q: 1 }); out.push('called') } catch (e) { out.push([e instanceof ToolCallError, e.code, e.toolName, e.message]) }
      }
      const p = tools.nope()
      out.push(p instanceof Promise, typeof tools.nope, tools.nope.name, Object.isFrozen(tools.nope))
      try { await p } catch (e) { out.push(e.code) }
      return out`,
        {
          bindings: ['get_weather', 'get_weather_now', 'fs.read', 'search'],
          call: async (name, args) => (calls++, echo(name, args)),
        },
      )
      expect(r.error).toBeUndefined()
      expect(r.value).toEqual([
        [true, 'UNKNOWN_TOOL', 'get_wether', 'no tool named "get_wether"; did you mean get_weather?'],
        [true, 'UNKNOWN_TOOL', 'GET_WEATHER', 'no tool named "GET_WEATHER"; did you mean get_weather?'],
        [true, 'UNKNOWN_TOOL', 'weather', 'no tool named "weather"; did you mean get_weather?'],
        [true, 'UNKNOWN_TOOL', 'fs_read', 'no tool named "fs_read"; did you mean "fs.read"?'],
        [true, 'UNKNOWN_TOOL', 'serch', 'no tool named "serch"; did you mean search?'],
        [
          true,
          'UNKNOWN_TOOL',
          'zzz',
          'no tool named "zzz"; the tools are get_weather, get_weather_now, "fs.read", search',
        ],
        true,
        'function',
        'nope',
        true,
        'UNKNOWN_TOOL',
      ])
      expect(calls).toBe(0)
      expect(r.stats.subCalls).toBe(0)
    },
  )

  s.it(
    'an UNKNOWN_TOOL message suggests at most three tools, lists at most ten, and says when a run has none',
    async () => {
      const many = Array.from({ length: 25 }, (_, i) => `tool_${String.fromCharCode(97 + i)}`)
      const code = `const out = []
      for (const name of ['tool_', 'unrelated_name', 'x'.repeat(500)]) { try { await tools[name]() } catch (e) { out.push(e.message) } }
      return out`
      const r = await s.run(code, { bindings: many })
      expect(r.error).toBeUndefined()
      const [close, far, long] = r.value as [string, string, string]
      expect(close).toBe('no tool named "tool_"; did you mean tool_a, tool_b or tool_c?')
      expect(far).toBe(`no tool named "unrelated_name"; the tools are ${many.slice(0, 10).join(', ')} and 15 more`)
      expect(long).toBe(
        `no tool named "${'x'.repeat(80)}"\u2026; the tools are ${many.slice(0, 10).join(', ')} and 15 more`,
      )
      const one = await s.run('try { await tools.b() } catch (e) { return e.message }', { bindings: ['only'] })
      expect(one.value).toBe('no tool named "b"; the only tool is only')
      const none = await s.run('try { await tools.search() } catch (e) { return [e.code, e.message] }', {
        bindings: [],
      })
      expect(none.value).toEqual(['UNKNOWN_TOOL', 'no tool named "search"; this run has no tools'])
    },
  )

  s.it(
    'then, symbols and the keys generic code reads stay undefined on tools: await, JSON, coercion and in work as before',
    async () => {
      const r = await s.run(
        `const keys = ['then', 'toJSON', 'constructor', 'prototype', '__proto__', 'toString', 'valueOf', 'hasOwnProperty', 'isPrototypeOf']
      const undef = keys.filter((k) => tools[k] === undefined)
      const symbols = [Symbol.iterator, Symbol.toPrimitive, Symbol.toStringTag, Symbol.asyncIterator].map((k) => typeof tools[k])
      let coerced
      try { coerced = String(tools) } catch (e) { coerced = e instanceof TypeError ? 'TypeError' : String(e) }
      const awaited = (await tools) === tools
      const viaAsync = (await (async () => tools)()) === tools
      return { undef, symbols, coerced, awaited, viaAsync, json: JSON.stringify(tools), tag: Object.prototype.toString.call(tools),
        in: ['get_wether' in tools, 'get_weather' in tools, 'then' in tools], keys: Object.keys(tools), own: Reflect.ownKeys(tools),
        typeofReal: typeof tools.get_weather, typeofUnknown: typeof tools.get_wether, proto: Object.getPrototypeOf(tools) === null,
        frozen: Object.isFrozen(tools), sealed: Object.isSealed(tools), extensible: Object.isExtensible(tools),
        desc: typeof Object.getOwnPropertyDescriptor(tools, 'get_weather').value, missingDesc: Object.getOwnPropertyDescriptor(tools, 'get_wether') === undefined }`,
        { bindings: ['get_weather'] },
      )
      expect(r.error).toBeUndefined()
      expect(r.value).toEqual({
        undef: [
          'then',
          'toJSON',
          'constructor',
          'prototype',
          '__proto__',
          'toString',
          'valueOf',
          'hasOwnProperty',
          'isPrototypeOf',
        ],
        symbols: ['undefined', 'undefined', 'undefined', 'undefined'],
        coerced: 'TypeError',
        awaited: true,
        viaAsync: true,
        json: '{}',
        tag: '[object Object]',
        in: [false, true, false],
        keys: ['get_weather'],
        own: ['get_weather'],
        typeofReal: 'function',
        typeofUnknown: 'function',
        proto: true,
        frozen: true,
        sealed: true,
        extensible: false,
        desc: 'function',
        missingDesc: true,
      })
      const returned = await s.run('return tools', { bindings: ['get_weather'] })
      expect(returned.error?.kind).toBe('invalid-output')
    },
  )

  s.it(
    'a program cannot reach into the tools proxy: inherited traps and patched intrinsics change nothing',
    async () => {
      const r = await s.run(
        `for (const trap of ['get', 'has', 'ownKeys', 'getOwnPropertyDescriptor', 'set', 'defineProperty', 'deleteProperty', 'getPrototypeOf', 'apply'])
        Object.prototype[trap] = () => { throw new Error('trap ' + trap) }
      String.prototype.toLowerCase = () => 'pwned'
      String.prototype.charCodeAt = () => 0
      String.prototype.slice = () => 'pwned'
      JSON.stringify = () => 'pwned'
      RegExp.prototype.test = () => false
      Object.defineProperty(Array.prototype, '0', { set() { throw new Error('setter') }, configurable: true })
      let message
      try { await tools.echoo({}) } catch (e) { message = e.message }
      let escaped
      try { escaped = tools.nope.constructor.constructor('return typeof process')() } catch (e) { escaped = 'threw' }
      let assigned
      try { tools.nope = 1; assigned = tools.nope === 1 } catch { assigned = false }
      let deleted
      try { deleted = delete tools.echo } catch { deleted = false }
      return [message, 'nope' in tools, Object.keys(tools).length, (await tools.echo({ a: 1 })).args.a, escaped, assigned, deleted, typeof tools.echo]`,
      )
      expect(r.error).toBeUndefined()
      expect(r.value).toEqual([
        'no tool named "echoo"; did you mean echo?',
        false,
        7,
        1,
        'undefined',
        false,
        false,
        'function',
      ])
    },
  )

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
