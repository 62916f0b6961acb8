import { expect } from 'vitest'
import { SandboxUsageError } from '../errors.js'
import type { JsonValue } from '../types.js'
import { BINDINGS, echo, sleep, type SuiteContext } from './context.js'

/** Abort, disposal, calls after the end, misuse, no state across runs. */
export function lifecycleTests(s: SuiteContext): void {
  s.it(
    'onLog sees every log entry of the result, in order, each once, while the program waits on the host',
    async () => {
      const seen: string[] = []
      let seenAtCall: string[] = []
      const r = await s.run(
        'console.log("one")\nconsole.info("two", 2)\nawait tools.echo({})\nfor (let i = 0; i < 3; i++) console.log("after", i)\nreturn 1',
        {
          onLog: (text) => void seen.push(text),
          call: async (name, args) => ((seenAtCall = [...seen]), echo(name, args)),
        },
      )
      expect(r.value).toBe(1)
      expect(seen).toEqual(r.logs)
      expect(r.logs).toEqual(['one', 'two 2', 'after 0', 'after 1', 'after 2'])
      // The entries before the sub-call had reached the listener when the host was called.
      expect(seenAtCall).toEqual(['one', 'two 2'])
      // Over the output limit: the listener still sees exactly the entries the result keeps; a throwing listener changes nothing.
      const flood: string[] = []
      const over = await s.run('for (let i = 0; i < 1000; i++) console.log("line " + i)', {
        limits: { maxOutputBytes: 100 },
        onLog: (text) => {
          flood.push(text)
          throw new Error('listener failure')
        },
      })
      expect(over.error?.kind).toBe('output-limit')
      expect(flood).toEqual(over.logs)
    },
  )

  s.it('a run aborted before it starts fails with abort', async () => {
    const c = new AbortController()
    c.abort()
    let calls = 0
    const r = await s.run('await tools.echo({})', { signal: c.signal, call: async () => (calls++, null) })
    expect(r.error?.kind).toBe('abort')
    expect(calls).toBe(0)
  })

  s.it('a run aborted while waiting on the host fails with abort and the call sees its signal', async () => {
    const c = new AbortController()
    let signalled = false
    const r = await s.run('console.log("x")\nawait tools.slow({})', {
      signal: c.signal,
      call: (_n, _a, signal) =>
        new Promise<JsonValue>((resolve) => {
          setTimeout(() => c.abort(), 30)
          signal.addEventListener('abort', () => ((signalled = true), resolve(null)))
        }),
    })
    expect(r.error?.kind).toBe('abort')
    expect(r.logs).toEqual(['x'])
    expect(signalled).toBe(true)
  })

  s.it('a run aborted during a busy loop fails with abort', async () => {
    const c = new AbortController()
    const r = await s.run('await tools.echo({})\nwhile (true) {}', {
      signal: c.signal,
      limits: { cpuMs: 10_000, wallMs: 10_000 },
      call: async (name, args) => (setTimeout(() => c.abort(), 100), echo(name, args)),
    })
    expect(r.error?.kind).toBe('abort')
    expect(r.stats.wallMs).toBeLessThan(5000)
  })

  s.it('a host call still running when the run ends sees its signal aborted', async () => {
    let signal: AbortSignal | undefined
    const r = await s.run('tools.slow({})\nawait tools.echo({})\nreturn "done"', {
      call: (name, args, sig) =>
        name === 'slow' ? ((signal = sig), new Promise<JsonValue>(() => {})) : echo(name, args),
    })
    expect(r.value).toBe('done')
    expect(signal?.aborted).toBe(true)
  })

  s.it('calls made after the run settled are refused and never reach the host', async () => {
    const names: string[] = []
    const r = await s.run(
      `const later = async () => { for (let i = 0; i < 5; i++) await null; return tools.echo({ late: true }) }
      later().catch(() => {})
      Promise.resolve().then(() => Promise.resolve()).then(() => tools.echo({ late: 2 }).catch(() => {}))
      return 'early'`,
      { call: async (name, args) => (names.push(JSON.stringify(args)), echo(name, args)) },
    )
    expect(r.value).toBe('early')
    await sleep(50)
    expect(names).toEqual([])
  })

  s.it('no state survives from one run to the next', async () => {
    await s.run(
      'globalThis.leak = 42\nObject.prototype.polluted = 1\nArray.prototype.push = null\nMath.random = () => 4',
    )
    const r = await s.run('return [typeof leak, ({}).polluted === undefined, typeof [].push, Math.random() !== 4]')
    expect(r.value).toEqual(['undefined', true, 'function', true])
  })

  s.it(
    'no state survives a run that was stopped mid-flight (timeout, output limit, memory)',
    async () => {
      const stopped = [
        {
          code: 'globalThis.leak = 1; Object.prototype.polluted = 1; while (true) {}',
          limits: { cpuMs: 30 },
          kind: 'timeout',
        },
        {
          code: 'globalThis.leak = 2; Array.prototype.push = null; await tools.echo({}); for (;;) console.log("x".repeat(100))',
          limits: { maxOutputBytes: 1000 },
          kind: 'output-limit',
        },
        {
          code: 'globalThis.leak = 3; JSON.parse = null; globalThis.held = []; for (;;) held.push("y".repeat(1000) + held.length)',
          limits: { memoryBytes: 32 * 1024 * 1024 },
          kind: 'memory',
        },
      ] as const
      for (const { code, limits, kind } of stopped) {
        const r = await s.run(code, { limits })
        expect(r.error?.kind, code).toBe(kind)
        const after = await s.run(
          'const e = await tools.echo({ n: 1 }); return [typeof leak, ({}).polluted === undefined, typeof [].push, typeof JSON.parse, e.args.n]',
        )
        expect(after.value, `after: ${code}`).toEqual(['undefined', true, 'function', 'function', 1])
      }
    },
    30_000,
  )

  s.it('each run gets its own Math.random sequence', async () => {
    const draws = await Promise.all(Array.from({ length: 4 }, () => s.run('return [Math.random(), Math.random()]')))
    const seen = new Set(draws.map((r) => JSON.stringify(r.value)))
    expect(seen.size).toBe(4)
    const sequential: string[] = []
    for (let i = 0; i < 4; i++) sequential.push(JSON.stringify((await s.run('return Math.random()')).value))
    expect(new Set(sequential).size).toBe(4)
  })

  s.it('run rejects on misuse: bad bindings or limits', async () => {
    const rt = s.runtime()
    const call = echo
    await expect(rt.run({ code: '1', bindings: ['a', 'a'], call })).rejects.toBeInstanceOf(SandboxUsageError)
    await expect(rt.run({ code: '1', bindings: [1 as unknown as string], call })).rejects.toBeInstanceOf(
      SandboxUsageError,
    )
    await expect(rt.run({ code: '1', bindings: ['a'], call, limits: { cpuMs: -1 } })).rejects.toBeInstanceOf(
      SandboxUsageError,
    )
    const ok = await rt.run({ code: 'return 1', bindings: ['a'], call })
    expect(ok.value).toBe(1)
  })

  s.it('dispose aborts live runs and waits for them; later runs reject', async () => {
    const rt = await s.create()
    let signalled = false
    let called!: () => void
    const calledP = new Promise<void>((resolve) => (called = resolve))
    const live = rt.run({
      code: 'await tools.slow({})',
      bindings: BINDINGS,
      call: (_n, _a, signal) =>
        new Promise<JsonValue>((resolve) => {
          called()
          signal.addEventListener('abort', () => ((signalled = true), resolve(null)))
        }),
    })
    let spun!: () => void
    const spunP = new Promise<void>((resolve) => (spun = resolve))
    const busy = rt.run({
      code: 'await tools.echo({})\nwhile (true) {}',
      bindings: BINDINGS,
      call: async (name, args) => (setTimeout(spun, 20), echo(name, args)),
      limits: { cpuMs: 60_000, wallMs: 60_000 },
    })
    await Promise.all([calledP, spunP])
    await rt.dispose()
    const [a, b] = await Promise.all([live, busy])
    expect(a.error?.kind).toBe('abort')
    expect(b.error?.kind).toBe('abort')
    expect(signalled).toBe(true)
    await expect(rt.run({ code: '1', bindings: [], call: echo })).rejects.toBeInstanceOf(SandboxUsageError)
    await rt.dispose()
  })

  s.it('the runtime supports await using (Symbol.asyncDispose)', async () => {
    const rt = await s.create()
    expect(typeof rt[Symbol.asyncDispose]).toBe('function')
    expect((await rt.run({ code: 'return 2', bindings: [], call: echo })).value).toBe(2)
    await rt[Symbol.asyncDispose]()
    await expect(rt.run({ code: '1', bindings: [], call: echo })).rejects.toBeInstanceOf(SandboxUsageError)
  })

  s.it('a program that awaits something that can never settle ends', async () => {
    const r = await s.run('await new Promise(() => {})', { limits: { wallMs: 1000 } })
    expect(['exception', 'timeout']).toContain(r.error?.kind)
  })

  s.it('JavaScript mode does not strip types', async () => {
    const r = await s.run('const a: number = 1', { language: 'javascript' })
    expect(r.error?.kind).toBe('syntax')
  })
}
