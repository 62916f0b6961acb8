import { DEFAULT_LIMITS, type CodeRunLimits, type CodeRunRequest } from '@ptc/sandbox'
import type { FromEngine } from '../engine/protocol.js'
import { GUEST_PRELUDE, PROGRAM_FILENAME, acceptRun } from '@ptc/sandbox/backend'
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, test } from 'vitest'
import { isolatedVmAvailability } from '../index.js'
import { sleep } from '../test-helpers.js'
import { processCpuMs } from './hot-threads.js'
import { ProcessPool } from './process-pool.js'
import { RunHost } from './run-host.js'

const availability = isolatedVmAvailability()

/** A pool of real engine children. */
const realPool = (processes: number): ProcessPool =>
  new ProcessPool({
    processes,
    runsPerProcess: 1,
    graceMs: 100,
    config: {
      warmIsolates: 1,
      memoryBytes: DEFAULT_LIMITS.memoryBytes,
      prelude: GUEST_PRELUDE,
      programFilename: PROGRAM_FILENAME,
    },
  })

/** An admitted run of `code` (JavaScript), not placed yet; `call` answers its sub-calls (none by default). */
async function admittedRun(
  code: string,
  call: CodeRunRequest['call'] = async () => null,
  bindings: string[] = [],
  limits: Partial<CodeRunLimits> = {},
): Promise<RunHost> {
  const request = { code, bindings, call, language: 'javascript' as const, limits: { wallMs: 20_000, ...limits } }
  const admitted = await acceptRun(request, DEFAULT_LIMITS)
  if (!admitted.ok) throw new Error('not admitted')
  return new RunHost(request, admitted)
}

/** Every message the engine sends `run` is also pushed to `into`. */
function recordReceived(run: RunHost, into: FromEngine[]): void {
  const receive = run.receive.bind(run)
  run.receive = (message) => {
    into.push(message)
    receive(message)
  }
}

describe.skipIf(!availability.available)('the engine process pool', () => {
  test('children that fail to start are respawned with a growing delay, and runs still settle at their deadlines', async () => {
    const pool = new ProcessPool({
      processes: 1,
      runsPerProcess: 1,
      graceMs: 100,
      config: {
        warmIsolates: 0,
        memoryBytes: DEFAULT_LIMITS.memoryBytes,
        prelude: GUEST_PRELUDE,
        programFilename: PROGRAM_FILENAME,
      },
      command: { entry: '/nonexistent/ptc-engine-child.js', execArgv: [] },
    })
    try {
      const request = { code: 'return 1', bindings: [], call: async () => null, limits: { wallMs: 2000 } }
      const admitted = await acceptRun(request, DEFAULT_LIMITS)
      if (!admitted.ok) throw new Error('not admitted')
      const run = new RunHost(request, admitted)
      pool.place(run)
      const r = await run.result
      expect(r.error?.kind).toBe('timeout')
      expect(r.error?.message).toMatch(/no isolated-vm engine process was ready/)
      expect(r.stats.wallMs).toBeGreaterThanOrEqual(1990)
      expect(r.stats.wallMs).toBeLessThan(3500)
      // 50, 100, 200, 400, 800 ms…: a handful of attempts in 2 s, not a spawn storm.
      expect(pool.spawned).toBeGreaterThanOrEqual(2)
      expect(pool.spawned).toBeLessThanOrEqual(10)
      const before = pool.spawned
      await sleep(1000)
      expect(pool.spawned - before).toBeLessThanOrEqual(2)
    } finally {
      await pool.dispose()
    }
  }, 30_000)

  test('an argument text past maxArgumentChars stays in the engine process: the host gets its length and refuses the call', async () => {
    const pool = realPool(1)
    try {
      const called: unknown[] = []
      const code = `const out = []
        for (const n of [92, 93]) {
          try { out.push(await tools.echo({ s: 'x'.repeat(n) })) } catch (e) { out.push([e.code, e.message]) }
        }
        return out`
      const run = await admittedRun(code, async (_name, args) => (called.push(args), 'ok'), ['echo'], {
        maxArgumentChars: 100,
      })
      const received: FromEngine[] = []
      recordReceived(run, received)
      pool.place(run)
      const result = await run.result
      expect(result.value).toEqual([
        'ok',
        [
          'INVALID_ARGS',
          'the arguments are 101 characters of JSON, more than the 100 a sub-call may pass (the maxArgumentChars limit)',
        ],
      ])
      expect(called).toEqual([{ s: 'x'.repeat(92) }])
      // {"s":"…"} is 8 characters around the string: the text of 100 crossed, the one of 101 did not.
      expect(received.flatMap((m) => (m.t === 'call' ? [m.args] : []))).toEqual([`{"s":"${'x'.repeat(92)}"}`, 101])
    } finally {
      await pool.dispose()
    }
  }, 30_000)

  test('a log entry or a value longer than the output budget, and a thrown message past twice it, stay in the engine process', async () => {
    const pool = realPool(1)
    try {
      const received: FromEngine[] = []
      const results = []
      for (const code of [
        'console.log("x".repeat(100000))',
        'return "x".repeat(100000)',
        'throw new Error("x".repeat(100000))',
      ]) {
        const run = await admittedRun(code, undefined, [], { maxOutputBytes: 1000 })
        recordReceived(run, received)
        pool.place(run)
        results.push((await run.result).error)
      }
      expect(results.map((e) => e?.kind)).toEqual(['output-limit', 'output-limit', 'exception'])
      // `Error: ` and the position, ` (line 1, column 7)`, around the 100 000 characters.
      expect(results[2]?.message).toMatch(/from 100026 characters\)$/)
      // The log entry and the value as their lengths (JSON text: 2 quotes); the error's text with its message cut to 3 024.
      expect(received.flatMap((m) => (m.t === 'log' ? [m.text] : []))).toEqual([100000])
      const finishes = received.flatMap((m) => (m.t === 'finish' ? [m.payload] : []))
      expect(finishes[0]).toBe(100002)
      expect(
        typeof finishes[1] === 'string' &&
          finishes[1].length < 20_000 &&
          (JSON.parse(finishes[1]) as { cutChars: number }).cutChars,
      ).toBe(100000 - 3024)
    } finally {
      await pool.dispose()
    }
  }, 30_000)

  test("a run's answer carries its engine process's CPU time, which the grace after it is measured from", async () => {
    const pool = realPool(1)
    try {
      const run = await admittedRun('let s = 0; for (let i = 0; i < 1e6; i++) s += i; return s')
      pool.place(run)
      expect((await run.result).value).toBe(499999500000)
      const pid = pool.pids[0] as number
      // The whole process's (its startup and the loop), not the run's: read from /proc, a little later, it is the
      // same figure less what /proc's rounding drops (user and system time each cut to ticks of 10 ms: a clean
      // run measured 832.7 against 820).
      expect(run.engineCpuMs).toBeGreaterThan((await run.result).stats.cpuMs)
      expect(run.engineCpuMs).toBeLessThanOrEqual((processCpuMs(pid) as number) + 20)
    } finally {
      await pool.dispose()
    }
  }, 30_000)

  test('runs placed on a child killed from outside, before the pool saw it die, start on another child', async () => {
    const pool = realPool(2)
    try {
      // Both children up: two runs at once need both.
      const warm = [await admittedRun('return 1'), await admittedRun('return 2')]
      for (const run of warm) pool.place(run)
      expect(await Promise.all(warm.map(async (run) => (await run.result).value))).toEqual([1, 2])
      for (let round = 0; round < 3; round++) {
        const [a, b] = [await admittedRun('return 6 * 7'), await admittedRun('return 7 * 6')]
        // Killed from outside (as the OOM killer would): the pool learns of it only from the exit event, later.
        process.kill(pool.pids[0] as number, 'SIGKILL')
        // Now, before that event: the first run goes to the dead child (the least loaded, first), the second to the other.
        pool.place(a)
        pool.place(b)
        const results = await Promise.all([a.result, b.result])
        expect(results.map((r) => [r.value, r.error?.message])).toEqual([
          [42, undefined],
          [42, undefined],
        ])
        while (pool.pids.length < 2) await sleep(10)
      }
    } finally {
      await pool.dispose()
    }
  }, 60_000)

  test('a run its child had started fails with the child, and a run is placed again once at most', async () => {
    const pool = realPool(1)
    try {
      let entered!: () => void
      const inCall = new Promise<void>((resolve) => (entered = resolve))
      const run = await admittedRun('return await tools.hang({})', () => (entered(), new Promise<never>(() => {})), [
        'hang',
      ])
      pool.place(run)
      await inCall
      process.kill(pool.pids[0] as number, 'SIGKILL')
      const r = await run.result
      expect(r.error?.kind).toBe('crash')
      expect(r.error?.message).toMatch(/died \(it ended with signal SIGKILL\)/)
      // Placed again once: a second engine going before it started fails it.
      const other = await admittedRun('return 1')
      expect(other.requeue()).toBe(true)
      expect(other.requeue()).toBe(false)
      other.stop('abort')
    } finally {
      await pool.dispose()
    }
  }, 30_000)

  test('the first child starts alone and the others once it is ready', async () => {
    const pool = realPool(3)
    try {
      expect(pool.spawned).toBe(1)
      const run = await admittedRun('return 6 * 7')
      pool.place(run)
      expect((await run.result).value).toBe(42)
      expect(pool.spawned).toBe(3)
      expect(pool.pids.length).toBe(3)
    } finally {
      await pool.dispose()
    }
  }, 30_000)
})

/**
 * A stand-in engine child that speaks the protocol without isolated-vm, for the host's grace rules. The program's
 * source names what it does: `burn` keeps a thread computing and never answers; `late` answers and confirms its end
 * 400 ms later without computing (a child whose thread waits for a core); `stuck` answers and keeps a thread computing
 * (a built-in that ignores its stop). Anything else answers 1 and ends at once.
 */
const STAND_IN_CHILD = `
import { readFileSync } from 'node:fs'
import { Worker } from 'node:worker_threads'
const cpuMs = () => {
  const f = readFileSync('/proc/self/stat', 'latin1').slice(readFileSync('/proc/self/stat', 'latin1').lastIndexOf(')') + 2).split(' ')
  return (Number(f[11]) + Number(f[12])) * 10
}
const spin = () => new Worker('for (;;);', { eval: true })
const send = (message) => process.send([message])
process.on('message', ({ t, run, input }) => {
  if (t !== 'start') return
  const mode = /MODE:(\\w+)/.exec(input.source)?.[1]
  if (mode === 'burn') return void spin()
  send({ t: 'finish', run, kind: 1, payload: '1', cpuMs: 0, processCpuMs: cpuMs() })
  if (mode === 'late') setTimeout(() => send({ t: 'ended', run }), 400)
  else if (mode === 'stuck') spin()
  else send({ t: 'ended', run })
})
send({ t: 'ready' })
`

/** Resolves with 'ended' once `run`'s engine confirms its end, or with why the engine went first. */
function whenEngineDone(run: RunHost): Promise<string> {
  return new Promise((resolve) => {
    const [ended, gone] = [run.engineEnded.bind(run), run.engineGone.bind(run)]
    run.engineEnded = (kept, fresh) => (ended(kept, fresh), resolve('ended'))
    run.engineGone = (why) => (gone(why), resolve(why))
  })
}

describe.skipIf(!existsSync('/proc/self/task'))('the grace after an answer', () => {
  /** One stand-in child taking two runs at once. */
  function standInPool(): ProcessPool {
    const entry = join(mkdtempSync(join(tmpdir(), 'ptc-stand-in-')), 'child.mjs')
    writeFileSync(entry, STAND_IN_CHILD)
    return new ProcessPool({
      processes: 1,
      runsPerProcess: 2,
      graceMs: 100,
      config: { warmIsolates: 0, memoryBytes: 0, prelude: '', programFilename: 'p.js' },
      command: { entry, execArgv: [] },
    })
  }

  test('a child that computes for its other run while a finished run waits for a core is not killed', async () => {
    const pool = standInPool()
    try {
      const burner = await admittedRun('// MODE:burn')
      pool.place(burner)
      const late = await admittedRun('// MODE:late')
      const engineDone = whenEngineDone(late)
      pool.place(late)
      expect((await late.result).value).toBe(1)
      // Its end came 400 ms after its answer, four graces, while the burner's thread kept the process busy.
      expect(await engineDone).toBe('ended')
      const after = await admittedRun('return 1')
      pool.place(after)
      expect((await after.result).value).toBe(1)
      expect(pool.spawned).toBe(1)
      expect(burner.ended).toBe(false)
    } finally {
      await pool.dispose()
    }
  }, 30_000)

  test('a finished run that keeps computing beside a live run gets its child killed', async () => {
    const pool = standInPool()
    try {
      const burner = await admittedRun('// MODE:burn')
      pool.place(burner)
      const stuck = await admittedRun('// MODE:stuck')
      pool.place(stuck)
      expect((await stuck.result).value).toBe(1)
      const r = await burner.result
      expect(r.error?.kind).toBe('crash')
      expect(r.error?.message).toMatch(/a run in it did not stop within 100 ms of its answer/)
    } finally {
      await pool.dispose()
    }
  }, 30_000)
})
