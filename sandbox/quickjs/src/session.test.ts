import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { SandboxUsageError } from '@ptc/sandbox'
import type { CodeRunRequest, CodeRunResult, CodeRunSessionInfo, CodeRuntime, JsonValue } from '@ptc/sandbox'
import { createIsolatedVmRuntime, isolatedVmAvailability } from '@ptc/sandbox-isolated-vm'
import { createQuickJSRuntime, type QuickJSRuntimeOptions } from './index.js'

/** Overruns any wall inside native code: the interrupt handler is polled every ~10 000 bytecodes, each here a long `join`. */
const HOSTILE = '(() => { const a = new Array(2e6).fill(123456789); for (;;) a.join() })()'
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms))

/** The host side of the tests' tools: `double({ n })`, `fail()` (rejects), anything else echoes its arguments. */
async function call(name: string, args: JsonValue): Promise<JsonValue> {
  if (name === 'double') return (args as { n: number }).n * 2
  if (name === 'fail') throw new Error('the tool failed on purpose')
  return args
}

function request(code: string, extra: Partial<CodeRunRequest> = {}): CodeRunRequest {
  return { code, bindings: ['double', 'fail', 'echo', 'hold'], call, language: 'javascript', ...extra }
}

/** `rt.endSession`, which every QuickJS runtime has. */
function endSession(rt: CodeRuntime, key: string): Promise<boolean> {
  if (rt.endSession === undefined) throw new Error('this runtime keeps no sessions')
  return rt.endSession(key)
}

/** The session part of a session run's result (failing the test when it is missing). */
function info(result: CodeRunResult): CodeRunSessionInfo {
  expect(result.session, JSON.stringify(result)).toBeDefined()
  return result.session as CodeRunSessionInfo
}

/** A deterministic shuffle (mulberry32), so a failing order can be replayed. */
function shuffle<T>(items: T[], seed: number): T[] {
  let s = seed >>> 0
  const next = (): number => {
    s = (s + 0x6d2b79f5) >>> 0
    let t = s
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
  const out = [...items]
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(next() * (i + 1))
    ;[out[i], out[j]] = [out[j] as T, out[i] as T]
  }
  return out
}

const MODES: readonly { isolation: 'worker' | 'inline'; options: QuickJSRuntimeOptions }[] = [
  { isolation: 'worker', options: { isolation: 'worker', poolSize: 2 } },
  { isolation: 'inline', options: { isolation: 'inline' } },
]

describe.each(MODES)('QuickJS sandbox sessions ($isolation isolation)', ({ isolation, options }) => {
  let rt: CodeRuntime
  let keys = 0
  /** A session key no other test uses. */
  const fresh = (name: string): string => `${isolation}-${name}-${++keys}`
  const run = (
    session: string | undefined,
    code: string,
    extra: Partial<CodeRunRequest> = {},
  ): Promise<CodeRunResult> => rt.run(request(code, { ...(session === undefined ? {} : { session }), ...extra }))
  /** A session run expected to succeed: its value. */
  const value = async (
    session: string | undefined,
    code: string,
    extra: Partial<CodeRunRequest> = {},
  ): Promise<JsonValue | undefined> => {
    const result = await run(session, code, extra)
    expect(result.error, `${code}: ${JSON.stringify(result.error)}`).toBeUndefined()
    return result.value
  }

  beforeAll(async () => {
    rt = createQuickJSRuntime(options)
    // Engines booted before the first test, for both workers.
    await Promise.all([rt.run(request('return 1')), rt.run(request('return 1'))])
  })
  afterAll(() => rt.dispose())

  test('three sessions interleaved with each other and with plain runs, two runs at a time, each keep exactly their own state', async () => {
    const sessions = [fresh('mix-a'), fresh('mix-b'), fresh('mix-c')]
    for (const s of sessions) await value(s, `const tag = ${JSON.stringify(s)}; let count = 0; const seen = []`)
    // 30 session runs and 10 plain runs in a shuffled order, taken two at a time (so both workers
    // are busy and a session's next run may find the worker that holds its memory taken), never two
    // runs of one session together. A session's expected count is the number of its runs dispatched.
    const queue: (string | undefined)[] = shuffle(
      [...sessions.flatMap((s) => Array<string>(10).fill(s)), ...Array<undefined>(10).fill(undefined)],
      20240611,
    )
    const dispatched = new Map(sessions.map((s) => [s, 0]))
    const runStep = async (session: string | undefined): Promise<void> => {
      if (session === undefined) {
        expect(
          await value(
            undefined,
            'const r = [typeof tag, typeof count, typeof seen]; globalThis.tag = "plain"; await tools.echo({}); return r',
          ),
        ).toEqual(['undefined', 'undefined', 'undefined'])
        return
      }
      const n = (dispatched.get(session) as number) + 1
      dispatched.set(session, n)
      const got = await value(
        session,
        'count += 1; seen.push(count); await tools.echo({}); return [tag, count, seen.length, seen.every((x, i) => x === i + 1)]',
      )
      expect(got).toEqual([session, n, n, true])
    }
    while (queue.length > 0) {
      const first = queue.shift()
      const partner = queue.findIndex((s) => s === undefined || s !== first)
      const pair = partner === -1 ? [first] : [first, queue.splice(partner, 1)[0]]
      await Promise.all(pair.map(runStep))
    }
    for (const s of sessions) expect(await value(s, 'return [tag, count]')).toEqual([s, 10])
  }, 60_000)

  ;(isolation === 'worker' ? test : test.skip)(
    'a session whose worker is busy runs its next program on the other worker, with its state (worker isolation only)',
    async () => {
      const s = fresh('moves')
      const holders: { release(): void; started: Promise<void>; result: Promise<CodeRunResult> }[] = []
      const hold = (): (typeof holders)[number] => {
        let release!: () => void
        let started!: () => void
        const released = new Promise<JsonValue>((resolve) => (release = () => resolve(null)))
        const startedP = new Promise<void>((resolve) => (started = resolve))
        const result = run(undefined, 'return await tools.hold({})', {
          call: (name, args) => (name === 'hold' ? (started(), released) : call(name, args)),
        })
        const h = { release, started: startedP, result }
        holders.push(h)
        return h
      }
      // Both workers busy; the session's first run waits, and gets the worker the first holder frees (X).
      const [p1, p2] = [hold(), hold()] as const
      await Promise.all([p1.started, p2.started])
      const first = run(s, 'const mine = "state"; return 1')
      p1.release()
      expect((await first).value).toBe(1)
      await p1.result
      // X (the only idle worker) takes a new holder; freeing the other worker (Y) leaves only Y idle.
      const p3 = hold()
      await p3.started
      p2.release()
      await p2.result
      try {
        expect(await value(s, 'return mine')).toBe('state')
      } finally {
        p3.release()
        await p3.result
      }
    },
  )

  test('programs that leave nothing behind do not grow the session: each run record is freed when the next starts', async () => {
    const s = fresh('steady')
    const bytes: number[] = []
    for (let i = 0; i < 200; i++) {
      const result = await run(s, 'return await Promise.resolve(1)')
      if (i === 39 || i === 199) bytes.push(info(result).bytes)
    }
    // A run record kept alive by a reference cycle (left to QuickJS's cycle collector) grew it by ~1.6 KiB a run.
    expect(bytes[1]).toBeLessThanOrEqual(bytes[0] as number)
  })

  test('a session of JSON-like records seals to under 15% of its engine memory (byte planes + brotli) and resumes exactly, here and in another runtime', async () => {
    const s = fresh('sealed')
    const build = `const n = 25000
globalThis.data = Array.from({ length: n }, (_, i) => ({ id: i, name: 'item-' + i, tags: i % 3 === 0 ? ['a', 'b'] : ['c'], price: i * 1.25, ok: i % 2 === 0 }))
return JSON.stringify(data).length`
    const made = await run(s, build)
    expect(made.error).toBeUndefined()
    const state = info(made).bytes
    expect(state).toBeGreaterThan(4 * 1024 * 1024)
    const check =
      'return [data.length, data[24999].name, data.reduce((sum, r) => sum + r.price, 0), data.filter((r) => r.ok).length]'
    const expected = [25000, 'item-24999', ((24999 * 25000) / 2) * 1.25, 12500]
    const sealed = await (rt.suspendSession as (key: string) => Promise<Uint8Array | undefined>)(s)
    expect(sealed).toBeDefined()
    expect((sealed as Uint8Array).byteLength / state).toBeLessThan(0.15)
    await (rt.resumeSession as (key: string, bytes: Uint8Array) => Promise<void>)(s, sealed as Uint8Array)
    expect(await value(s, check)).toEqual(expected)
    // Another runtime (same build, same secret) resumes the bytes too.
    const secret = Buffer.alloc(32, 7)
    const one = createQuickJSRuntime({ ...options, sessions: { secret } })
    const two = createQuickJSRuntime({ ...options, sessions: { secret } })
    try {
      expect((await one.run(request(build, { session: 'moved' }))).error).toBeUndefined()
      const bytes = await (one.suspendSession as (key: string) => Promise<Uint8Array | undefined>)('moved')
      await (two.resumeSession as (key: string, bytes: Uint8Array) => Promise<void>)('moved', bytes as Uint8Array)
      expect((await two.run(request(check, { session: 'moved' }))).value).toEqual(expected)
    } finally {
      await Promise.all([one.dispose(), two.dispose()])
    }
  }, 60_000)

  test('a program that throws keeps the declarations made before the throw', async () => {
    const s = fresh('throw')
    const thrown = await run(
      s,
      'const before = 1\nglobalThis.alsoBefore = 2\nthrow new Error("stop here")\nconst after = 3',
    )
    expect(thrown.error?.kind).toBe('exception')
    expect(thrown.error?.message).toMatch(/stop here/)
    expect(info(thrown).kept).toBe(true)
    expect(await value(s, 'return [before, alsoBefore, typeof after]')).toEqual([1, 2, 'undefined'])
  })

  test('a run stopped by its CPU limit leaves a session that serves the next program with its earlier state', async () => {
    const s = fresh('cpu')
    await value(s, 'const earlier = "kept"')
    const stopped = await run(s, 'globalThis.during = 1; while (true) {}', { limits: { cpuMs: 200 } })
    expect(stopped.error?.kind).toBe('timeout')
    const { kept } = info(stopped)
    // What the stopped run left is the session's exactly when it says it was kept.
    expect(await value(s, 'return [earlier, typeof during]')).toEqual(['kept', kept ? 'number' : 'undefined'])
    expect(await value(s, 'return earlier')).toBe('kept')
  })

  test('an aborted run leaves a session that serves the next program with its earlier state', async () => {
    const s = fresh('abort')
    await value(s, 'const earlier = "kept"')
    const controller = new AbortController()
    const held = async (name: string, args: JsonValue): Promise<JsonValue> => {
      if (name !== 'hold') return call(name, args)
      controller.abort()
      return new Promise<JsonValue>(() => undefined)
    }
    const aborted = await run(s, 'globalThis.during = 1; await tools.hold({}); return "not reached"', {
      call: held,
      signal: controller.signal,
    })
    expect(aborted.error?.kind).toBe('abort')
    const { kept } = info(aborted)
    expect(await value(s, 'return [earlier, typeof during]')).toEqual(['kept', kept ? 'number' : 'undefined'])
  })

  test('a promise chain still unfinished when a program returns runs on: the next program sees its effect after `await null`', async () => {
    const s = fresh('leftover')
    const first = await run(
      s,
      'Promise.resolve().then(() => 0).then(() => 0).then(() => 0).then(() => { globalThis.late = 1 }); return typeof globalThis.late',
    )
    expect(first.value).toBe('undefined')
    expect(await value(s, 'await null; return globalThis.late')).toBe(1)
  })

  test('a session run past its memory limit ends as memory, and the runtime and the session serve the next run', async () => {
    // A runtime whose own memory limit is the runs' (so its engines are booted for it), and one worker.
    const limits = { memoryBytes: 32 * 1024 * 1024 }
    const own = createQuickJSRuntime({ ...options, ...(isolation === 'worker' ? { poolSize: 1 } : {}), limits })
    try {
      const on = async (session: string | undefined, code: string): Promise<CodeRunResult> =>
        own.run(request(code, { limits, ...(session === undefined ? {} : { session }) }))
      expect((await on('m', 'const earlier = "kept"')).error).toBeUndefined()
      const blown = await on('m', '(() => { const a = []; for (;;) a.push({ s: "z".repeat(100) + a.length }) })()')
      expect(blown.error?.kind, JSON.stringify(blown.error)).toBe('memory')
      info(blown)
      const next = await on('m', 'return earlier')
      expect(next.error, JSON.stringify(next.error)).toBeUndefined()
      expect(next.value).toBe('kept')
      expect((await on(undefined, 'return 2')).value).toBe(2)
      expect((await on('m', 'return earlier')).value).toBe('kept')
    } finally {
      await own.dispose()
    }
  })

  test('a session keeps its state when its next run has another memoryBytes (another engine image)', async () => {
    const s = fresh('memory-change')
    await value(s, 'const earlier = "kept"')
    expect(await value(s, 'return earlier', { limits: { memoryBytes: 32 * 1024 * 1024 } })).toBe('kept')
    expect(await value(s, 'return earlier')).toBe('kept')
  })

  ;(isolation === 'worker' ? test : test.skip)(
    'a run the watchdog kills (worker isolation only) is not kept, and the next run of the session has the state from before it',
    async () => {
      const s = fresh('watchdog')
      await value(s, 'const earlier = "kept"')
      const killed = await run(s, `globalThis.during = 1; ${HOSTILE}`, { limits: { wallMs: 500 } })
      expect(killed.error?.kind).toBe('timeout')
      expect(killed.error?.message).toMatch(/terminated/)
      const left = info(killed)
      expect(left.kept).toBe(false)
      expect(left.note).toMatch(/without its engine's state/)
      expect(await value(s, 'return [earlier, typeof during]')).toEqual(['kept', 'undefined'])
    },
    30_000,
  )

  test('an empty or over-long session key is misuse: run() rejects with SandboxUsageError', async () => {
    await expect(run('', 'return 1')).rejects.toBeInstanceOf(SandboxUsageError)
    await expect(run('k'.repeat(300), 'return 1')).rejects.toBeInstanceOf(SandboxUsageError)
    // The bounds themselves are accepted.
    expect(await value('k'.repeat(256), 'return 1')).toBe(1)
    expect(await value('k', 'return 1')).toBe(1)
  })

  describe('session limits', () => {
    const runtimes: CodeRuntime[] = []
    const make = (sessions: NonNullable<QuickJSRuntimeOptions['sessions']>): CodeRuntime => {
      // One worker: these tests are about the table's bounds, not about a session moving between
      // workers (covered above).
      const created = createQuickJSRuntime({ ...options, ...(isolation === 'worker' ? { poolSize: 1 } : {}), sessions })
      runtimes.push(created)
      return created
    }
    afterAll(() => Promise.all(runtimes.splice(0).map((r) => r.dispose())))

    test('a session idle past idleTtlMs is dropped: its next run is fresh, with a note naming idleTtlMs', async () => {
      const limited = make({ idleTtlMs: 50 })
      const first = await limited.run(request('const x = 1', { session: 't' }))
      expect(info(first).kept).toBe(true)
      await sleep(300)
      const next = await limited.run(request('return typeof x', { session: 't' }))
      expect(next.value).toBe('undefined')
      expect(info(next).fresh).toBe(true)
      expect(info(next).note).toMatch(/idleTtlMs/)
    })

    test('a session used again before idleTtlMs passes keeps its state', async () => {
      const limited = make({ idleTtlMs: 60_000 })
      await limited.run(request('const x = 1', { session: 't' }))
      const next = await limited.run(request('return typeof x', { session: 't' }))
      expect(next.value).toBe('number')
      expect(info(next).fresh).toBe(false)
    })

    test('past maxSessions a new session drops the least recently used one (fresh, note naming maxSessions); the others keep theirs', async () => {
      const limited = make({ maxSessions: 2 })
      const on = (session: string, code: string): Promise<CodeRunResult> => limited.run(request(code, { session }))
      await on('a', 'const who = "a"')
      await on('b', 'const who = "b"')
      await on('c', 'const who = "c"')
      const b = await on('b', 'return who')
      expect(b.value).toBe('b')
      expect(info(b).fresh).toBe(false)
      const a = await on('a', 'return typeof who')
      expect(a.value).toBe('undefined')
      expect(info(a).fresh).toBe(true)
      expect(info(a).note).toMatch(/maxSessions/)
      // a's new start evicted c (now the least recently used): b, used last before it, stays.
      expect((await on('b', 'return who')).value).toBe('b')
    })

    test('a run that leaves more than maxSessionBytes is not kept (note naming maxSessionBytes); the next run sees the state from before it', async () => {
      const limited = make({ maxSessionBytes: 300_000 })
      const on = (code: string): Promise<CodeRunResult> => limited.run(request(code, { session: 'big' }))
      const small = await on('const before = "small"')
      expect(info(small).kept).toBe(true)
      expect(info(small).bytes).toBeLessThanOrEqual(300_000)
      const big = await on('globalThis.huge = "x".repeat(5 * 1024 * 1024); return huge.length')
      expect(big.value).toBe(5 * 1024 * 1024)
      expect(info(big).kept).toBe(false)
      expect(info(big).note).toMatch(/maxSessionBytes/)
      expect(info(big).bytes).toBe(info(small).bytes)
      const next = await on('return [before, typeof huge]')
      expect(next.value).toEqual(['small', 'undefined'])
      expect(info(next).kept).toBe(true)
    })
  })

  test('dispose() with sessions alive completes, and runs after it reject as on any disposed runtime', async () => {
    const own = createQuickJSRuntime(options)
    await own.run(request('const x = 1', { session: 'alive' }))
    await own.run(request('const y = 2', { session: 'other' }))
    expect((await own.run(request('return x', { session: 'alive' }))).value).toBe(1)
    await own.dispose()
    await expect(own.run(request('return x', { session: 'alive' }))).rejects.toMatchObject({
      name: 'SandboxUsageError',
      code: 'SANDBOX_DISPOSED',
    })
    await expect(own.run(request('return 1'))).rejects.toBeInstanceOf(SandboxUsageError)
  })
})

const ivm = isolatedVmAvailability()

describe('the other backend', () => {
  test.skipIf(!ivm.available)(
    `isolated-vm keeps sessions too, as live isolates it cannot suspend${ivm.available ? '' : ` (skipped: ${ivm.reason})`}`,
    async () => {
      const rt = createIsolatedVmRuntime({ processes: 1 })
      try {
        const first = await rt.run(request('const x = 1; return x', { session: 's' }))
        expect(info(first)).toMatchObject({ key: 's', fresh: true, kept: true, runs: 1 })
        const second = await rt.run(request('return x + 1', { session: 's' }))
        expect(second.value).toBe(2)
        expect(info(second)).toMatchObject({ fresh: false, kept: true, runs: 2 })
        expect((await rt.run(request('return typeof x'))).value).toBe('undefined')
        expect(await endSession(rt, 's')).toBe(true)
        expect(rt.suspendSession).toBeUndefined()
        expect(rt.resumeSession).toBeUndefined()
      } finally {
        await rt.dispose()
      }
    },
  )
})
