/**
 * The liveness section of the hostile suite (issue 10, SPEC section 9 "Liveness"): whatever the guest
 * or the host's `call` does, a run answers by its wall plus a small grace, nothing it started keeps
 * burning CPU afterwards, and the runtime serves the next run. Each test asserts the failure kind, the
 * answer time (stats and measured, against `ANSWER_BOUND_MS`, a generous bound: the tight grace is
 * measured in bench/liveness) and a working next run.
 */
import { expect } from 'vitest'
import type { JsonValue } from '@ptc/sandbox'
import { cpuSettles, procAvailable } from './proc.js'
import { ANSWER_BOUND_MS, HOST_LAG_BOUND_MS, type HostileContext, type LivenessBackend } from './hostile.suite.js'
import { OUTPUT_CASES } from './output.cases.js'

const MiB = 1024 * 1024
const never = (): Promise<JsonValue> => new Promise(() => {})

/** Why an inline QuickJS runtime cannot pass a test: the guest runs on the host thread. */
export const INLINE_NATIVE =
  'inline isolation runs the guest on the calling thread: nothing can preempt a long native built-in there (documented limit of inline mode)'

interface NativeCase {
  readonly name: string
  readonly code: string
  readonly wallMs: number
  readonly memoryBytes: number
  /** The built-in polls QuickJS's interrupt handler, so inline isolation stops it too. */
  readonly inlineApplies?: boolean
}

/**
 * Long native built-ins, sized per engine so that each is still inside the built-in at its wall: V8
 * is hundreds of times faster than the QuickJS interpreter (a 3e6-item join ends in about 0.6 s on
 * V8, 1 s on QuickJS), and QuickJS refuses BigInts over about a million bits. V8's BigInt toString is
 * fast: 3n ** 2000000n took 0.32 s in all here, so a quiet machine finished it inside a 300 ms wall;
 * 3n ** 8000000n takes about 1.8 s.
 */
export function nativeCases(backend: LivenessBackend): NativeCase[] {
  const v8 = backend === 'isolated-vm'
  return [
    {
      // On QuickJS the Array.from({ length: 3e6 }, …).join() spends 0.45 s in Array.from (bytecode,
      // interruptible) and 0.3-0.55 s in join on this machine: too close to 700 ms to be sure the wall falls
      // inside the join. A join of 5e7 holes is about 1.5 s of join alone, after no setup at all.
      name: 'a long Array.prototype.join',
      code: v8
        ? 'return Array.from({ length: 1e7 }, (_, i) => i).join().length'
        : 'return new Array(5e7).join().length',
      wallMs: v8 ? 300 : 700,
      memoryBytes: (v8 ? 512 : 256) * MiB,
    },
    {
      name: 'a default sort() of a large random array',
      code: `const a = Array.from({ length: ${v8 ? '8e6' : '1e6'} }, () => Math.random())\na.sort()\nreturn a.length`,
      wallMs: v8 ? 1500 : 700,
      memoryBytes: (v8 ? 1024 : 256) * MiB,
    },
    {
      name: 'a BigInt power and its toString',
      code: `return (3n ** ${v8 ? '8000000n' : '600000n'}).toString().length`,
      wallMs: v8 ? 300 : 700,
      memoryBytes: 256 * MiB,
    },
    {
      name: 'catastrophic regex backtracking',
      code: 'return /(a+)+$/.test("a".repeat(40) + "b")',
      wallMs: 700,
      memoryBytes: 64 * MiB,
      inlineApplies: true,
    },
  ]
}

/** Asserts that the process tree (this process, its threads and any child processes) stops burning CPU. */
async function expectCpuSettles(name: string, when = 'after the answer'): Promise<void> {
  const { settled, windows } = await cpuSettles()
  const shown = windows
    .map((w) => `${w.cpuMs.toFixed(0)} ms CPU in ${w.wallMs.toFixed(0)} ms at +${w.atMs.toFixed(0)} ms`)
    .join('; ')
  expect(settled, `${name}: CPU ${when} (${shown})`).toBe(true)
}

export function livenessTests(s: HostileContext): void {
  const inline = s.backend === 'quickjs-inline'

  for (const c of nativeCases(s.backend)) {
    s.it(
      `liveness: ${c.name} past the wall answers by the wall, stops burning CPU, and the next run works`,
      async () => {
        const t = await s.timed(c.code, { limits: { cpuMs: 60_000, wallMs: c.wallMs, memoryBytes: c.memoryBytes } })
        expect(t.result.error?.kind, `${c.name}: ${t.result.error?.message ?? 'no error'}`).toBe('timeout')
        expect(t.result.error?.message).toMatch(/wall|cpu/i)
        s.expectAnsweredBy(c.name, t, c.wallMs)
        if (procAvailable) await expectCpuSettles(c.name)
        await s.expectNextRunWorks()
      },
      30_000,
      inline && c.inlineApplies !== true ? INLINE_NATIVE : undefined,
    )
  }

  s.it(
    'liveness: a recursion that catches its own stack overflows, a long native call in each catch, ends at its CPU budget (not its wall) and stops burning CPU',
    async () => {
      // QuickJS polls for interrupts every 10 000 calls or jumps: here minutes apart (each overflow builds a
      // backtrace of the whole stack, then the catch joins a million characters). V8 stops it at once.
      const code =
        "function f() { try { return f() } catch (e) { 'x'.repeat(1e6).split('').join(''); return f() } }\nreturn f()"
      const wallMs = 20_000
      const t = await s.timed(code, { limits: { cpuMs: 300, wallMs } })
      expect(t.result.error, t.result.error?.message).toMatchObject({
        kind: 'timeout',
        message: expect.stringMatching(/^CPU time limit of 300 ms exceeded/),
      })
      s.expectAnsweredBy('catching recursion', t, wallMs)
      if (procAvailable) await expectCpuSettles('catching recursion')
      await s.expectNextRunWorks()
    },
    60_000,
    inline
      ? "inline isolation runs the guest on the calling thread: nothing can stop it between two of QuickJS's interrupt polls (documented limit of inline mode)"
      : undefined,
  )

  for (const [name, code] of [
    ['a Map of small objects', 'const m = new Map()\nfor (let i = 0; ; i++) m.set(i, { i, s: "v" + i })'],
    ['new Array(2e8).fill(0)', 'return new Array(2e8).fill(0).length'],
    // indexOf flattens V8's rope, so every doubling really allocates.
    ['string doubling', 'let s = "x"\nfor (;;) { s += s; s.indexOf("y") }'],
    ['typed arrays of 1 MiB', 'const a = []\nfor (;;) a.push(new Uint8Array(1 << 20).fill(1))'],
  ] as const) {
    s.it(
      `liveness: a memory bomb (${name}) at 64 MiB ends as memory and the next run works`,
      async () => {
        // The CPU budget is only a backstop here (the QuickJS interpreter fills 64 MiB of Map entries in
        // 1.5-2.5 s of CPU on a quiet machine, more than 6 s on a loaded one): the kind must be memory.
        const wallMs = 25_000
        const t = await s.timed(code, { limits: { cpuMs: 20_000, wallMs, memoryBytes: 64 * MiB } })
        expect(t.result.error?.kind, `${name}: ${t.result.error?.message ?? 'no error'}`).toBe('memory')
        s.expectAnsweredBy(name, t, wallMs)
        await s.expectNextRunWorks()
        await s.expectNextRunWorks()
      },
      60_000,
    )
  }

  s.it('liveness: 300 000 empty console.log() stop at a 1000-byte budget with exactly 1000 entries kept', async () => {
    const t = await s.timed('for (let i = 0; i < 300000; i++) console.log()\nreturn "not reached"', {
      limits: { maxOutputBytes: 1000, cpuMs: 10_000, wallMs: 10_000 },
    })
    expect(t.result.error?.kind).toBe('output-limit')
    expect(t.result.logs).toHaveLength(1000)
    expect(t.result.logs.every((l) => l === '')).toBe(true)
    expect(t.result.value).toBeUndefined()
    await s.expectNextRunWorks()
  })

  s.it('liveness: lone surrogates are charged 3 bytes each plus the separator and arrive as one U+FFFD', async () => {
    for (const c of OUTPUT_CASES) {
      const r = await s.run(c.code, { limits: { maxOutputBytes: c.maxOutputBytes } })
      expect({ kind: r.error?.kind, logs: r.logs, value: r.value }, `${c.code} with ${c.maxOutputBytes} bytes`).toEqual(
        {
          kind: c.kind,
          logs: c.logs,
          value: c.value,
        },
      )
    }
  })

  s.it('liveness: a program over maxProgramBytes ends as limit before any work', async () => {
    const limit = 1000
    const head = 'return 1 //'
    const exact = head + 'x'.repeat(limit - head.length)
    expect((await s.run(exact, { limits: { maxProgramBytes: limit } })).value).toBe(1)
    for (const [what, code] of [
      ['one byte over', exact + 'x'],
      ['a syntax error over the limit (refused before parsing)', 'const = ;//' + 'x'.repeat(limit)],
      ['multi-byte text over the limit in bytes, under it in UTF-16 units', '// ' + 'é'.repeat(limit / 2)],
    ] as const) {
      const t = await s.timed(code, { limits: { maxProgramBytes: limit } })
      expect(t.result.error?.kind, what).toBe('limit')
      expect(t.result.error?.message, what).toMatch(/maxProgramBytes/)
      expect(t.result.stats.cpuMs, what).toBe(0)
      expect(t.elapsedMs, what).toBeLessThan(ANSWER_BOUND_MS)
    }
    // The default limit is 1 MiB.
    const big = await s.timed(`return 1 //${'x'.repeat(MiB)}`)
    expect(big.result.error?.kind).toBe('limit')
    expect(big.elapsedMs).toBeLessThan(ANSWER_BOUND_MS)
    await s.expectNextRunWorks()
  })

  s.it(
    'liveness: a 900 KiB TypeScript program under the limit does not block the host event loop',
    async () => {
      const lines: string[] = []
      let size = 0
      for (let i = 0; size < 900 * 1024; i++) {
        const line = `interface Shape${i} { readonly id: number; tags: string[]; nested?: { ok: boolean } }`
        lines.push(line)
        size += line.length + 1
      }
      lines.push('const answer: number = 41', 'return answer + 1')
      const code = lines.join('\n')
      expect(Buffer.byteLength(code)).toBeLessThan(MiB)
      const t = await s.timed(code, { limits: { cpuMs: 5000, wallMs: 15_000 } })
      expect(t.result.error).toBeUndefined()
      expect(t.result.value).toBe(42)
      // A hang detector, like every lag check of this battery: stripping the program on the host thread blocks it
      // for only 120-270 ms here, less than a loaded machine's own lag, so which thread strips a long program is
      // asserted by behaviour instead (the "who prepares session programs" tests of both backends count sucrase's
      // transforms on the host thread).
      expect(t.lagMs, 'event-loop lag while the program was prepared and ran').toBeLessThan(HOST_LAG_BOUND_MS)
    },
    30_000,
  )

  s.it('liveness: a host call that never settles and ignores its signal ends the run by its wall', async () => {
    const wallMs = 600
    const t = await s.timed('await tools.slow({})\nreturn "not reached"', { call: never, limits: { wallMs } })
    expect(t.result.error?.kind).toBe('timeout')
    expect(t.result.error?.message).toMatch(/wall/i)
    s.expectAnsweredBy('a never-settling host call', t, wallMs)
    // The program returns with such a call in flight: the run ends then (a value, not a timeout), the call is
    // abandoned. Its wall is only a backstop (600 ms was too short for a resumed run on a loaded machine).
    const backstopMs = 5000
    const left = await s.timed('tools.slow({}).catch(() => {})\nreturn 7', {
      call: never,
      limits: { wallMs: backstopMs },
    })
    expect(left.result.error).toBeUndefined()
    expect(left.result.value).toBe(7)
    expect(left.elapsedMs).toBeLessThan(backstopMs + ANSWER_BOUND_MS)
    await s.expectNextRunWorks()
  })

  s.it(
    'liveness: a run waiting on slow host calls burns no CPU meanwhile, and gets each result',
    async () => {
      // The engine waits in both shapes: on one call (a sequential loop), and on two at once.
      const pending: (() => void)[] = []
      let started = 0
      const call = async (_name: string, args: JsonValue): Promise<JsonValue> => {
        started++
        await new Promise<void>((resolve) => pending.push(resolve))
        return args
      }
      const releaseAll = (): void => pending.splice(0).forEach((resolve) => resolve())
      const until = async (calls: number): Promise<void> => {
        while (started < calls) await new Promise((resolve) => setTimeout(resolve, 5))
      }
      const code =
        'const a = []\nfor (let i = 0; i < 3; i++) a.push((await tools.slow({ i })).i)\nconst b = await Promise.all([tools.slow({ i: 3 }), tools.slow({ i: 4 })])\nreturn [...a, ...b.map((x) => x.i)]'
      const run = s.run(code, { call, limits: { wallMs: 30_000, cpuMs: 30_000 } })
      // Each call settles only when released: meanwhile the process tree must go quiet.
      for (const [calls, what] of [
        [1, 'the first call'],
        [2, 'the second call'],
        [3, 'the third call'],
        [5, 'two calls at once'],
      ] as const) {
        await until(calls)
        if (procAvailable && calls !== 3)
          await expectCpuSettles('a run waiting on slow host calls', `while it waits on ${what}`)
        releaseAll()
      }
      const r = await run
      expect(r.error).toBeUndefined()
      expect(r.value).toEqual([0, 1, 2, 3, 4])
    },
    60_000,
  )

  s.it('liveness: a host call that throws synchronously rejects only that call', async () => {
    const call = ((): Promise<JsonValue> => {
      throw new Error('sync boom')
    }) as (name: string, args: JsonValue, signal: AbortSignal) => Promise<JsonValue>
    const t = await s.timed(
      'try { await tools.echo({}); return "resolved" } catch (e) { return [e instanceof ToolCallError, e.message] }',
      { call },
    )
    expect(t.result.error).toBeUndefined()
    expect(t.result.value).toEqual([true, 'sync boom'])
    expect(t.elapsedMs).toBeLessThan(ANSWER_BOUND_MS)
    await s.expectNextRunWorks()
  })

  s.it('liveness: host results that are not JSON reject only that call', async () => {
    const cyclic: Record<string, unknown> = {}
    cyclic.self = cyclic
    const bad: unknown[] = [
      10n,
      cyclic,
      {
        toJSON: () => {
          throw new Error('bad toJSON')
        },
      },
    ]
    const call = (async (_name: string, args: JsonValue) => bad[(args as { i: number }).i]) as (
      name: string,
      args: JsonValue,
    ) => Promise<JsonValue>
    const t = await s.timed(
      `const out = []
      for (let i = 0; i < 3; i++) {
        try { await tools.echo({ i }); out.push('resolved') } catch (e) { out.push(e instanceof ToolCallError ? 'ToolCallError' : 'other') }
      }
      return out`,
      { call },
    )
    expect(t.result.error).toBeUndefined()
    expect(t.result.value).toEqual(['ToolCallError', 'ToolCallError', 'ToolCallError'])
    expect(t.elapsedMs).toBeLessThan(ANSWER_BOUND_MS)
    await s.expectNextRunWorks()
  })

  s.it(
    'liveness: a huge host result (80 MiB) is answered by the wall (rejected call, memory, limit or timeout) and the next run works',
    async () => {
      const wallMs = 3000
      const huge = 'x'.repeat(80 * MiB)
      const t = await s.timed(
        'try { const r = await tools.echo({}); return r.length } catch (e) { return e instanceof ToolCallError ? "rejected" : "other" }',
        { call: async () => huge, limits: { wallMs, cpuMs: 2000, memoryBytes: 64 * MiB } },
      )
      s.expectAnsweredBy('an 80 MiB host result', t, wallMs)
      // The host chose to send 80 MiB to a 64 MiB guest: the call rejected, the run out of memory or
      // over a limit, or stopped by its wall are all answers; a crash, a hang or a host exception is not.
      const outcome = t.result.error?.kind ?? t.result.value
      expect(['rejected', 'memory', 'limit', 'timeout'], `${t.result.error?.message ?? ''}`).toContain(outcome)
      await s.expectNextRunWorks()
    },
    30_000,
  )
}
