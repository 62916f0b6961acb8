import { expect } from 'vitest'
import type { CodeRunRequest, CodeRunResult, CodeRunSessionInfo, JsonValue } from '../types.js'
import type { SuiteContext } from './context.js'

/** Host tools of the session tests: `double({ n })`, `fail()` (rejects), `hold()` (see the test), anything else echoes. */
async function tools(name: string, args: JsonValue): Promise<JsonValue> {
  await null
  if (name === 'double') return (args as { n: number }).n * 2
  if (name === 'fail') throw new Error('the tool failed on purpose')
  return args
}

const BINDINGS = ['double', 'fail', 'echo', 'hold']

/**
 * Sandbox sessions (`CodeRunRequest.session`), for a backend that keeps them (`ConformanceOptions.sessions`):
 * what carries over from one program to the next, what never crosses, the session info, one run at a
 * time, `endSession`. What ends or loses a session differs between backends and is tested by each.
 */
export function sessionTests(s: SuiteContext): void {
  let keys = 0
  const fresh = (name: string): string => `conformance-${name}-${++keys}`
  const run = (
    session: string | undefined,
    code: string,
    extra: Partial<CodeRunRequest> = {},
  ): Promise<CodeRunResult> =>
    s.run(code, {
      bindings: BINDINGS,
      call: tools,
      language: 'javascript',
      ...(session === undefined ? {} : { session }),
      ...extra,
    })
  const value = async (
    session: string | undefined,
    code: string,
    extra: Partial<CodeRunRequest> = {},
  ): Promise<JsonValue | undefined> => {
    const result = await run(session, code, extra)
    expect(result.error, `${code}: ${JSON.stringify(result.error)}`).toBeUndefined()
    return result.value
  }
  const info = (result: CodeRunResult): CodeRunSessionInfo => {
    expect(result.session, JSON.stringify(result)).toBeDefined()
    return result.session as CodeRunSessionInfo
  }
  const endSession = (key: string): Promise<boolean> => {
    const runtime = s.runtime()
    if (runtime.endSession === undefined) throw new Error(`${runtime.name} declares sessions but has no endSession`)
    return runtime.endSession(key)
  }

  s.it(
    'top-level declarations (const, let, var, function, class, destructured names) are seen by the next program of the session',
    async () => {
      const k = fresh('declarations')
      const declare = [
        'const c = 1',
        'let l = 2',
        'var v = 3',
        'function f(x) { return x * 10 }',
        'class K { constructor(n) { this.n = n } twice() { return this.n * 2 } }',
        'const { p, q: [r, ...rest] } = { p: 4, q: [5, 6, 7] }',
        'return "declared"',
      ]
      await value(k, declare.join('\n'))
      expect(
        await value(k, 'l = l + 1; return [c, l, v, f(4), new K(6).twice(), new K(1) instanceof K, p, r, rest]'),
      ).toEqual([1, 3, 3, 40, 12, true, 4, 5, [6, 7]])
      expect(await value(k, 'return l')).toBe(3)
      // A later program may redeclare a top-level const.
      expect(await value(k, 'const c = "second"; return c')).toBe('second')
      expect(await value(k, 'return c')).toBe('second')
    },
  )

  s.it('a TypeScript session program keeps its declarations too', async () => {
    const k = fresh('typescript')
    await value(
      k,
      'const n: number = 5\ninterface Shape { side: number }\nfunction area(x: Shape): number { return x.side * x.side }',
      { language: 'typescript' },
    )
    expect(await value(k, 'return area({ side: n })', { language: 'typescript' })).toBe(25)
  })

  s.it('a Map on globalThis keeps its identity and contents across programs', async () => {
    const k = fresh('map')
    await value(k, 'globalThis.m = new Map([["a", 1]]); globalThis.same = m; return m.size')
    await value(k, 'm.set("b", { deep: [2] }); return m.size')
    expect(await value(k, 'return [m === same, m instanceof Map, [...m.keys()], m.get("b").deep[0]]')).toEqual([
      true,
      true,
      ['a', 'b'],
      2,
    ])
  })

  s.it(
    'tools work in every program of a session, also from a function an earlier one declared; a failure is a ToolCallError',
    async () => {
      const k = fresh('tools')
      expect(
        await value(
          k,
          'const got = await tools.double({ n: 21 }); async function twice(n) { return tools.double({ n }) } return got',
        ),
      ).toBe(42)
      expect(
        await value(k, 'const more = await Promise.all([twice(1), tools.echo({ k: "v" })]); return [got, more]'),
      ).toEqual([42, [2, { k: 'v' }]])
      const probe =
        'try { await tools.fail({}) } catch (e) { return [e instanceof ToolCallError, e.name, String(e.message).includes("on purpose")] } return "no throw"'
      expect(await value(k, probe)).toEqual([true, 'ToolCallError', true])
      expect(await value(k, 'console.log("kept", got); return more[1].k')).toBe('v')
      expect((await run(k, 'console.log("second", got)')).logs).toEqual(['second 42'])
    },
  )

  s.it(
    "state never crosses sessions, a plain run sees none of it, and a session sees no plain run's globals",
    async () => {
      const a = fresh('iso-a')
      const b = fresh('iso-b')
      await value(a, 'const secret = "a"; globalThis.onGlobal = "a"; function fa() { return 1 }')
      expect(await value(a, 'return [secret, onGlobal, typeof fa]')).toEqual(['a', 'a', 'function'])
      expect(await value(b, 'return [typeof secret, typeof onGlobal, typeof fa]')).toEqual([
        'undefined',
        'undefined',
        'undefined',
      ])
      expect(await value(undefined, 'return [typeof secret, typeof onGlobal, typeof fa]')).toEqual([
        'undefined',
        'undefined',
        'undefined',
      ])
      await value(undefined, 'globalThis.plain = 1; var plainVar = 2')
      expect(await value(a, 'return [typeof plain, typeof plainVar, secret]')).toEqual(['undefined', 'undefined', 'a'])
      expect(await value(b, 'const secret = "b"; return secret')).toBe('b')
      expect(await value(a, 'return secret')).toBe('a')
    },
  )

  s.it(
    'result.session: fresh only on the first run, kept, the run count and the bytes held; a plain run has none',
    async () => {
      const k = fresh('info')
      const first = info(await run(k, 'const x = 1'))
      expect(first).toMatchObject({ key: k, fresh: true, kept: true, runs: 1 })
      expect(first.bytes).toBeGreaterThan(0)
      expect(first.note).toBeUndefined()
      expect(info(await run(k, 'return x'))).toMatchObject({ key: k, fresh: false, kept: true, runs: 2 })
      expect(info(await run(k, 'return x')).runs).toBe(3)
      expect((await run(undefined, 'return 1')).session).toBeUndefined()
    },
  )

  s.it(
    'a session runs one program at a time: of two concurrent runs, exactly one is refused as limit, naming the session',
    async () => {
      const k = fresh('busy')
      await value(k, 'let hits = 0')
      let release!: () => void
      const released = new Promise<JsonValue>((resolve) => (release = () => resolve(null)))
      const holding = (name: string, args: JsonValue): Promise<JsonValue> =>
        name === 'hold' ? released : tools(name, args)
      const code = 'hits += 1; await tools.hold({}); return hits'
      const runs = [run(k, code, { call: holding }), run(k, code, { call: holding })]
      // The refused run answers at once; the other waits in `hold` until then (or, if both ran, until the guard).
      const guard = setTimeout(release, 5000)
      await Promise.race(runs)
      release()
      const results = await Promise.all(runs)
      clearTimeout(guard)
      const refused = results.filter((r) => r.error !== undefined)
      expect(refused).toHaveLength(1)
      expect(refused[0]?.error?.kind).toBe('limit')
      expect(refused[0]?.error?.message).toContain(`"${k}"`)
      expect(results.find((r) => r.error === undefined)?.value).toBe(1)
      // The refused run changed nothing.
      expect(await value(k, 'return hits')).toBe(1)
    },
  )

  s.it('endSession during a run: the run finishes, its state is not kept, and the next run is fresh', async () => {
    const k = fresh('end-during')
    await value(k, 'const x = 1')
    let release!: () => void
    const released = new Promise<JsonValue>((resolve) => (release = () => resolve(null)))
    let entered!: () => void
    const inside = new Promise<void>((resolve) => (entered = resolve))
    const holding = (name: string, args: JsonValue): Promise<JsonValue> =>
      name === 'hold' ? (entered(), released) : tools(name, args)
    const running = run(k, 'globalThis.y = 2; await tools.hold({}); return x', { call: holding })
    await inside
    expect(await endSession(k)).toBe(true)
    release()
    const result = await running
    expect(result.value).toBe(1)
    expect(info(result).kept).toBe(false)
    const next = await run(k, 'return [typeof x, typeof y]')
    expect(next.value).toEqual(['undefined', 'undefined'])
    expect(info(next).fresh).toBe(true)
  })

  s.it('endSession drops the state (true, the next run is fresh); an unknown key resolves false', async () => {
    const k = fresh('end')
    await value(k, 'const x = 1')
    expect(await value(k, 'return typeof x')).toBe('number')
    expect(await endSession(k)).toBe(true)
    const after = await run(k, 'return typeof x')
    expect(after.value).toBe('undefined')
    expect(info(after)).toMatchObject({ fresh: true, runs: 1 })
    expect(await endSession(fresh('never-used'))).toBe(false)
    expect(await endSession(k)).toBe(true)
    expect(await endSession(k)).toBe(false)
  })
}
