import { expect } from 'vitest'
import type { JsonValue } from '@ptc/sandbox'
import type { HostileContext } from './hostile.suite.js'

const ESCAPE_PROBES = `
  const probes = {
    toolsValue: () => Object.values(tools)[0].constructor,
    toolFn: () => tools.echo.constructor.constructor,
    toolFnProto: () => Object.getPrototypeOf(tools.echo).constructor,
    console: () => console.constructor.constructor,
    consoleLog: () => console.log.constructor,
    toolCallError: () => ToolCallError.constructor,
    toolCallErrorProto: () => ToolCallError.prototype.constructor.constructor,
    promise: () => tools.echo({}).constructor.constructor,
    unknownTool: () => tools.nope.constructor,
    unknownToolPromise: () => tools.nope().constructor.constructor,
  }
  const out = {}
  for (const [k, get] of Object.entries(probes)) {
    try { out[k] = get()('return typeof process + "," + typeof require + "," + typeof globalThis.fetch')() }
    catch (e) { out[k] = 'threw' }
  }
  try { await tools.fail({}) } catch (e) {
    for (const [k, v] of [['hostError', e], ['hostErrorCtor', e.constructor]]) {
      try { out[k] = v.constructor.constructor('return typeof process')() } catch { out[k] = 'threw' }
    }
    out.hostErrorKeys = Object.getOwnPropertyNames(e).sort().join(',')
    // Only the frames count: the message may carry host text (it crosses by design), and V8's stack starts with it.
    const frames = String(e.stack).slice(String(e.name + ': ' + e.message).length)
    out.hostStack = /\\/work|node:|file:/.test(frames)
  }
  try { await tools.echo({ f: () => 1 }) } catch (e) { out.argError = e.constructor.constructor('return typeof process')() }
  try { await tools.nope({}) } catch (e) { out.unknownError = e.constructor.constructor('return typeof process')() }
`

/**
 * Program lines that replace the intrinsics a bridge might use (a `then` on every object, an index
 * setter on arrays, `call`/`apply`/`bind`, `Reflect.apply`, `JSON`): the tampering attacks start with
 * them and add their own.
 */
export const TAMPERED_INTRINSICS = `Object.defineProperty(Object.prototype, 'then', { get() { return undefined }, configurable: true })
      Object.defineProperty(Array.prototype, '0', { set() { throw new Error('index setter') }, get() { return 'x' }, configurable: true })
      Function.prototype.call = function () { throw new Error('call') }
      Function.prototype.apply = function () { throw new Error('apply') }
      Function.prototype.bind = function () { throw new Error('bind') }
      Reflect.apply = () => { throw new Error('reflect') }
      JSON.stringify = () => '"x"'; JSON.parse = () => 'x'`

/** The hostile programs. Each names the behaviour it checks. */
export function hostileProgramTests(s: HostileContext): void {
  s.it(
    'constructor-chain escapes through every injected object and host error reach only the guest realm',
    async () => {
      const r = await s.run(`${ESCAPE_PROBES}\nreturn out`, {
        call: async (name, args) => {
          if (name === 'fail') throw new Error(`host failure at ${new Error().stack ?? ''}`)
          return { name, args }
        },
      })
      expect(r.error).toBeUndefined()
      const v = r.value as Record<string, JsonValue>
      for (const k of [
        'toolsValue',
        'toolFn',
        'toolFnProto',
        'console',
        'consoleLog',
        'toolCallError',
        'toolCallErrorProto',
        'promise',
        'unknownTool',
        'unknownToolPromise',
      ]) {
        expect(v[k], k).toBe('undefined,undefined,undefined')
      }
      expect(v.hostError).toBe('undefined')
      expect(v.hostErrorCtor).toBe('undefined')
      expect(v.argError).toBe('undefined')
      expect(v.unknownError).toBe('undefined')
      const keys = String(v.hostErrorKeys).split(',')
      // SPEC section 8: a ToolCallError carries toolName, message, code and (where the pipeline has them) details.
      for (const k of keys) expect(['message', 'name', 'stack', 'toolName', 'code', 'details']).toContain(k)
      expect(keys).toContain('toolName')
      expect(v.hostStack).toBe(false)
    },
  )

  s.it('the globals are exactly the allow-list', async () => {
    const r = await s.run('return Reflect.ownKeys(globalThis).map(String)')
    const names = r.value as string[]
    for (const n of names) expect(s.globals, n).toContain(n)
    for (const n of ['tools', 'ToolCallError', 'console', 'Object', 'Promise', 'JSON']) expect(names).toContain(n)
  })

  s.it('tampering with tools, ToolCallError and console fails and the tools keep working', async () => {
    const r = await s.run(
      `
      const attempts = [
        () => { tools.echo = () => 'hijacked' }, () => { delete tools.echo }, () => { tools.extra = 1 },
        () => Object.defineProperty(tools, 'echo', { value: 1 }), () => Object.setPrototypeOf(tools, { x: 1 }),
        () => { globalThis.tools = {} }, () => { ToolCallError = null }, () => { ToolCallError.prototype.name = 'x' },
        () => { console.log = null }, () => { tools.echo.call = null }, () => { 'use strict'; tools.echo.name = 'x' },
      ]
      for (const a of attempts) { try { a() } catch {} }
      const r = await tools.echo({ ok: true })
      let err
      try { await tools.fail({}) } catch (e) { err = e }
      return {
        ok: r.args.ok, echo: tools.echo.name, keys: Object.keys(tools), proto: Object.getPrototypeOf(tools) === null,
        same: globalThis.tools === tools, err: err instanceof ToolCallError && err.name === 'ToolCallError',
        log: typeof console.log, call: typeof tools.echo.call,
      }`,
      { call: async (name, args) => (name === 'fail' ? Promise.reject(new Error('no')) : { name, args }) },
    )
    expect(r.error).toBeUndefined()
    expect(r.value).toEqual({
      ok: true,
      echo: 'echo',
      keys: ['echo', 'slow', 'fail'],
      proto: true,
      same: true,
      err: true,
      log: 'function',
      call: 'function',
    })
  })

  s.it('prototype and intrinsic tampering cannot corrupt the bridge', async () => {
    const got: JsonValue[] = []
    const r = await s.run(
      `${TAMPERED_INTRINSICS}
      Object.keys = () => ['hacked']; Object.getPrototypeOf = () => null
      WeakSet.prototype.has = () => true; Number.isFinite = () => true
      Symbol.prototype.toString = () => 'x'
      const a = await tools.echo({ list: [1, 2], nested: { k: 'v' } })
      console.log('still logging', { a: 1 })
      return { k: a.args.nested.k }`,
      { call: async (name, args) => (got.push(args), { name, args }) },
    )
    expect(got).toEqual([{ list: [1, 2], nested: { k: 'v' } }])
    expect(r.error).toBeUndefined()
    expect(r.value).toEqual({ k: 'v' })
    expect(r.logs).toEqual(['still logging { a: 1 }'])
  })

  s.it('thenables, proxies and getters as arguments reject that call or stop the run', async () => {
    let calls = 0
    const r = await s.run(
      `const bad = [
        { then(r) { r(1) } },
        new Proxy({}, { ownKeys() { throw new Error('trap') } }),
        { get x() { throw new Error('getter') } },
        (() => { const p = Proxy.revocable({}, {}); p.revoke(); return p.proxy })(),
      ]
      const out = []
      for (const b of bad) { try { await tools.echo(b); out.push('sent') } catch (e) { out.push(e instanceof ToolCallError) } }
      return out`,
      { call: async (name, args) => (calls++, { name, args }) },
    )
    expect(r.value).toEqual([true, true, true, true])
    expect(calls).toBe(0)
    const loop = await s.run('await tools.echo(new Proxy({}, { ownKeys() { while (true) {} } }))')
    s.expectTimeout('proxy trap loop in an argument', loop, 1000, /cpu/i)
  })

  s.it('thenables, proxies and getters as the completion value', async () => {
    expect((await s.run('return { then(resolve) { resolve(5) } }')).value).toBe(5)
    expect((await s.run('return { get x() { throw new Error("g") } }')).error?.kind).toBe('invalid-output')
    expect((await s.run('return new Proxy({}, { getPrototypeOf() { throw 1 } })')).error?.kind).toBe('invalid-output')
    expect((await s.run('return new Proxy([1, 2], {})')).value).toEqual([1, 2])
    const r = await s.run('return { get x() { while (true) {} } }')
    s.expectTimeout('getter loop in the completion value', r, 1000, /cpu/i)
    const never = await s.run('return { then() {} }')
    expect(['exception', 'timeout']).toContain(never.error?.kind)
  })

  s.it('calls after the run ended never reach the host, even from a microtask storm', async () => {
    const names: string[] = []
    const r = await s.run(
      `;(async () => { while (true) { await null; tools.echo({ late: true }).catch(() => {}) } })()
      return 'done'`,
      { call: async (name, args) => (names.push(JSON.stringify(args)), { name, args }) },
    )
    expect(r.value).toBe('done')
    await new Promise((resolve) => setTimeout(resolve, 50))
    expect(names.filter((n) => n.includes('late')).length).toBeLessThanOrEqual(1)
  })

  for (const [name, code] of [
    ['an infinite loop', 'while (true) {}'],
    ['an infinite loop inside catch', 'try { throw new Error() } catch { while (true) {} }'],
    ['an infinite loop inside finally', 'try { return 1 } finally { while (true) {} }'],
    ['an infinite loop after an await', 'await tools.echo({})\nfor (;;) {}'],
    ['a microtask storm', 'while (true) await null'],
    // Each job queues the next and returns nothing, so memory stays flat and only the CPU budget can stop it.
    [
      'a self-scheduling promise job',
      'const f = () => { Promise.resolve().then(f) }\nf()\nawait tools.echo({})\nawait new Promise(() => {})',
    ],
  ] as const) {
    s.it(`${name} hits the CPU budget`, async () => {
      const r = await s.run(code)
      s.expectTimeout(name, r, 1000, /cpu|wall/i)
    })
  }

  // Each job returns the next job's promise, so every promise of the chain stays alive: whichever of the memory
  // and CPU budgets the machine's speed reaches first stops it (a fast machine fills 64 MiB within 500 ms).
  s.it('a self-adopting promise chain is stopped by the memory or the CPU budget', async () => {
    const r = await s.run(
      'const f = () => Promise.resolve().then(f)\nf()\nawait tools.echo({})\nawait new Promise(() => {})',
    )
    expect(['memory', 'timeout']).toContain(r.error?.kind)
  })

  for (const [name, code] of [
    ['an array bomb', 'const a = []\nwhile (true) a.push([1, 2, 3, 4, 5, 6, 7, 8])'],
    ['a typed-array bomb', 'const a = []\nwhile (true) a.push(new Float64Array(1 << 16))'],
    ['a string bomb', 'const a = []\nlet i = 0\nwhile (true) a.push("x".repeat(1 << 16) + i++)'],
    ['a single huge allocation', 'const b = new ArrayBuffer(2 ** 30)\nreturn b.byteLength'],
  ] as const) {
    s.it(
      `${name} hits the memory limit`,
      async () => {
        const rss0 = process.memoryUsage().rss
        // Roomy budgets: near its heap limit V8 collects again and again, and on a machine slowed 4x isolated-vm's
        // bombs ran out of a 5 s budget before the 64 MiB; a fast machine stops them at the memory limit anyway.
        const r = await s.run(code, { limits: { cpuMs: 20_000, wallMs: 25_000 } })
        expect(['memory', 'exception'], r.error?.message).toContain(r.error?.kind)
        if (name !== 'a single huge allocation') expect(r.error?.kind, r.error?.message).toBe('memory')
        expect(process.memoryUsage().rss - rss0).toBeLessThan(512 * 1024 * 1024)
        await s.expectNextRunWorks()
      },
      90_000,
    )
  }

  s.it('deep recursion is contained', async () => {
    expect((await s.run('const f = (n) => f(n + 1) + 1\nf(0)')).error?.kind).toBe('exception')
    // Benign but deep work: the suite's short wall (1 s) is for hostile runs; a loaded machine needs more here.
    const roomy = { cpuMs: 10_000, wallMs: 20_000 }
    // Deep values never leave the guest (MAX_VALUE_DEPTH): the host, and a harness's recursive JSON.stringify,
    // never see one.
    const deepValue = await s.run(
      'const o = {}\nlet x = o\nfor (let i = 0; i < 1e4; i++) { x.n = {}; x = x.n }\nreturn o',
      { limits: roomy },
    )
    expect(deepValue.error).toEqual({
      kind: 'invalid-output',
      message: 'the return value is nested more than 1024 levels deep',
    })
    let calls = 0
    const deepArg = await s.run(
      'let a = []\nfor (let i = 0; i < 1e4; i++) a = [a]\ntry { await tools.echo(a) } catch (e) { return e.code }\nreturn 1',
      {
        call: async () => (calls++, null),
        limits: roomy,
      },
    )
    expect(deepArg.value).toBe('INVALID_ARGS')
    expect(calls).toBe(0)
    await s.expectNextRunWorks()
  })

  s.it('output floods stop at the output budget', async () => {
    // Not the suite's 500 ms CPU budget: what is tested is the output budget (a loaded machine ran out of the other).
    const roomy = { cpuMs: 5000, wallMs: 10_000 }
    const r = await s.run('while (true) console.log("x".repeat(1000))', {
      limits: { ...roomy, maxOutputBytes: 100_000 },
    })
    expect(r.error?.kind).toBe('output-limit')
    // Each entry costs its 1000 bytes plus a 1-byte separator: 99 fit in 100 000 bytes.
    expect(r.logs.length).toBe(99)
    const big = await s.run('console.log("y".repeat(10_000_000))', { limits: { ...roomy, maxOutputBytes: 100_000 } })
    expect(big.error?.kind).toBe('output-limit')
    const value = await s.run('return "z".repeat(2_000_000)', { limits: { ...roomy, maxOutputBytes: 1_000_000 } })
    expect(value.error?.kind).toBe('output-limit')
  })

  s.it('a long native builtin (huge Array.prototype.join) is stopped by the wall watchdog', async () => {
    const r = await s.run('return new Array(1e8).join("").length', { limits: { cpuMs: 60_000, wallMs: 1000 } })
    // An engine whose join is fast may finish first; otherwise the wall ceiling must hold.
    if (r.error === undefined) expect(r.stats.wallMs).toBeLessThan(1000)
    else s.expectTimeout('huge Array.prototype.join', r, 1000, /wall/i)
    await s.expectNextRunWorks()
  })

  s.it('a catastrophic regex is stopped', async () => {
    const r = await s.run('return /(a+)+$/.test("a".repeat(40) + "b")', { limits: { cpuMs: 60_000, wallMs: 1000 } })
    s.expectTimeout('catastrophic regex', r, 1000, /wall|cpu/i)
    await s.expectNextRunWorks()
  })

  s.it(
    '10^4 concurrent sub-calls complete (or hit the pending cap) without stalling the host',
    async () => {
      const code =
        'const rs = await Promise.all(Array.from({ length: 10000 }, (_, i) => tools.echo({ i })))\nreturn rs.length'
      const ok = await s.run(code, {
        limits: { maxPendingSubCalls: 10_000, maxSubCalls: 10_000, cpuMs: 10_000, wallMs: 20_000 },
      })
      expect(ok.error).toBeUndefined()
      expect(ok.value).toBe(10_000)
      expect(ok.stats.subCalls).toBe(10_000)
      const capped = await s.run(code, { limits: { cpuMs: 10_000, wallMs: 20_000 } })
      expect(capped.error?.kind).toBe('limit')
    },
    60_000,
  )

  s.it('nothing leaks across runs, including late host results', async () => {
    let release!: () => void
    const gate = new Promise<void>((resolve) => (release = resolve))
    const first = await s.run(
      `globalThis.secret = 'run-1'; Object.prototype.polluted = true; Array.prototype.map = null
      tools.slow({ from: 1 }).then((r) => { globalThis.late = r })
      await tools.echo({})
      return 'first'`,
      { call: async (name, args) => (name === 'slow' ? (await gate, { late: 1 }) : { name, args }) },
    )
    expect(first.value).toBe('first')
    const second = s.run(
      `const r = await tools.echo({ from: 2 })
      return [typeof secret, typeof late, ({}).polluted === undefined, typeof [].map, r.args.from]`,
    )
    release()
    expect((await second).value).toEqual(['undefined', 'undefined', true, 'function', 2])
  })
}
