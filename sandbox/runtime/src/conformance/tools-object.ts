import { expect } from 'vitest'
import { echo, type SuiteContext } from './context.js'

/** The guest's `tools` object: one frozen function per binding, unknown names, and what a program can do to it. */
export function toolsObjectTests(s: SuiteContext): void {
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
    'then, symbols and the keys generic code reads stay undefined on tools: await, JSON, coercion and in ' +
      'work as before',
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
}
