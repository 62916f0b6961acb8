/**
 * Liveness of runs that wait and of the process around them: a run queued behind a hostile run still
 * answers by its own wall (queueing counts, SPEC section 9), the queue is bounded, aborting or disposing
 * settles queued runs, a pending run keeps node alive, and `process.exit()` after a timed-out run is clean.
 */
import { spawn } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { expect } from 'vitest'
import type { CodeRunRequest, CodeRuntime, JsonValue } from '@ptc/sandbox'
import { ANSWER_BOUND_MS, type HostileContext, type TimedRun } from './hostile.suite.js'

const ROOT = fileURLToPath(new URL('../../', import.meta.url))
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms))
const echo = async (name: string, args: JsonValue): Promise<JsonValue> => ({ name, args })

const INLINE_PROCESS =
  'inline isolation has no worker to replace and no thread that outlives its run: the run holds the host thread itself until it ends'

/**
 * A run that holds its place for its whole wall: a busy loop where the guest has its own thread; on
 * inline isolation a call the host never answers (a busy guest there runs on the host thread, so no
 * timer of a queued run could fire meanwhile: that is inline's documented limit, not a queue property).
 * Its first call (`slow`) tells the host that its program runs, and so holds its place.
 */
function blocker(
  s: HostileContext,
  wallMs: number,
  started: () => void,
): { code: string; request: Partial<CodeRunRequest> } {
  const call =
    (answer: boolean) =>
    (name: string, args: JsonValue): Promise<JsonValue> => {
      if (name !== 'slow') return echo(name, args)
      started()
      return answer ? echo(name, args) : new Promise(() => {})
    }
  if (s.backend === 'quickjs-inline')
    return { code: 'await tools.slow({})', request: { call: call(false), limits: { wallMs } } }
  return {
    code: 'await tools.slow({})\nwhile (true) {}',
    request: { call: call(true), limits: { cpuMs: 60_000, wallMs } },
  }
}

/**
 * A runtime with one run at a time and `maxQueuedRuns` waiting; disposed after `fn`. No places are lent past the one
 * (`maxExtraRuns: 0`): the blocker, past 50 ms of CPU, would otherwise let a waiting run in.
 */
async function withGate(
  s: HostileContext,
  maxQueuedRuns: number,
  fn: (rt: CodeRuntime) => Promise<void>,
): Promise<void> {
  const rt = await s.create({ maxConcurrentRuns: 1, maxQueuedRuns, maxExtraRuns: 0 })
  try {
    await fn(rt)
  } finally {
    await rt.dispose()
  }
}

/**
 * How long the blocker's wall is: longer than any test holds it (each ends it by `stop` or `dispose`). A
 * resumed-session or durable battery seeds, suspends and resumes before each program, inside the run's wall:
 * on a loaded machine that once took most of a 4 s wall, and the blocker gave up its place early.
 */
const BLOCKER_WALL_MS = 60_000

/**
 * Starts the blocker on `rt` and waits until its program runs (it then holds the only place: a fixed pause
 * was not always enough on a loaded machine). `stop` aborts it. Wrapped: an async function would flatten the run.
 */
async function block(s: HostileContext, rt: CodeRuntime): Promise<{ running: Promise<TimedRun>; stop: () => void }> {
  let started!: () => void
  const running = new Promise<void>((resolve) => (started = resolve))
  const b = blocker(s, BLOCKER_WALL_MS, started)
  const controller = new AbortController()
  const run = s.timed(b.code, { ...b.request, signal: controller.signal }, rt)
  await Promise.race([running, run])
  return { running: run, stop: () => controller.abort() }
}

interface ChildRun {
  readonly code: number | null
  readonly signal: NodeJS.Signals | null
  readonly stdout: string
  readonly stderr: string
  readonly elapsedMs: number
}

/** Runs a fixture script under tsx from source, as a user's script would run; killed after `killAfterMs`. */
function runFixture(script: string, args: readonly string[], killAfterMs: number): Promise<ChildRun> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now()
    const child = spawn(
      process.execPath,
      [
        '--no-node-snapshot',
        '--conditions=@ptc/source',
        '--import',
        'tsx',
        fileURLToPath(new URL(`./fixtures/${script}`, import.meta.url)),
        ...args,
      ],
      { cwd: ROOT, env: { ...process.env, NODE_OPTIONS: '' }, stdio: ['ignore', 'pipe', 'pipe'] },
    )
    let stdout = ''
    let stderr = ''
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk))
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk))
    const killer = setTimeout(() => child.kill('SIGKILL'), killAfterMs)
    child.on('error', reject)
    child.on('close', (code, signal) => {
      clearTimeout(killer)
      resolve({ code, signal, stdout, stderr, elapsedMs: performance.now() - t0 })
    })
  })
}

export function queueingTests(s: HostileContext): void {
  const inline = s.backend === 'quickjs-inline'

  s.it(
    'liveness: a run queued behind a hostile run answers by its own wall, with queueMs reported',
    async () => {
      await withGate(s, 4, async (rt) => {
        const { running, stop } = await block(s, rt)
        const queued = await s.timed('return 1', { limits: { wallMs: 500 } }, rt)
        expect(queued.result.error?.kind, `queued run: ${JSON.stringify(queued.result)}`).toBe('timeout')
        s.expectAnsweredBy('a run queued behind a hostile run', queued, 500)
        expect(queued.result.stats.queueMs).toBeGreaterThan(0)
        // The hostile run held its place throughout; aborted, it answers and gives the place up.
        const stoppedAt = performance.now()
        stop()
        const b = await running
        expect(b.result.error?.kind, JSON.stringify(b.result)).toBe('abort')
        expect(performance.now() - stoppedAt, 'the hostile run answers its abort').toBeLessThan(ANSWER_BOUND_MS)
        await s.expectNextRunWorks(rt)
      })
    },
    30_000,
  )

  s.it(
    'liveness: a run past maxQueuedRuns ends as limit at once',
    async () => {
      await withGate(s, 1, async (rt) => {
        const { running } = await block(s, rt)
        const waiting = s.timed('return 1', { limits: { wallMs: 5000 } }, rt)
        await sleep(50)
        const refused = await s.timed('return 2', {}, rt)
        expect(refused.result.error?.kind, JSON.stringify(refused.result)).toBe('limit')
        expect(refused.elapsedMs).toBeLessThan(ANSWER_BOUND_MS)
        await rt.dispose()
        expect((await waiting).result.error?.kind).toBe('abort')
        expect((await running).result.error?.kind).toBe('abort')
      })
    },
    30_000,
  )

  s.it(
    'liveness: aborting a queued run ends it as abort at once',
    async () => {
      await withGate(s, 4, async (rt) => {
        const { running } = await block(s, rt)
        const controller = new AbortController()
        setTimeout(() => controller.abort(), 200)
        const queued = await s.timed('return 1', { limits: { wallMs: 5000 }, signal: controller.signal }, rt)
        expect(queued.result.error?.kind, JSON.stringify(queued.result)).toBe('abort')
        expect(queued.elapsedMs).toBeLessThan(200 + ANSWER_BOUND_MS)
        expect(queued.result.stats.queueMs).toBeGreaterThan(0)
        await rt.dispose()
        expect((await running).result.error?.kind).toBe('abort')
      })
    },
    30_000,
  )

  s.it(
    'liveness: dispose while runs are queued settles every one of them',
    async () => {
      const rt = await s.create({ maxConcurrentRuns: 1, maxQueuedRuns: 8, maxExtraRuns: 0 })
      const { running } = await block(s, rt)
      const queued = [1, 2, 3].map((i) => s.timed(`return ${i}`, { limits: { wallMs: 20_000 } }, rt))
      await sleep(100)
      const t0 = performance.now()
      await rt.dispose()
      const all = await Promise.all([running, ...queued])
      expect(performance.now() - t0, 'dispose and every settle').toBeLessThan(ANSWER_BOUND_MS)
      expect(all.map((t) => t.result.error?.kind)).toEqual(['abort', 'abort', 'abort', 'abort'])
    },
    30_000,
  )

  s.it(
    'liveness: a pending run keeps the process alive: a script that ends on its own gets both answers (exit code 0, not 13)',
    async () => {
      const child = await runFixture('pending-run.ts', [s.backend], 60_000)
      expect(child.stdout, child.stderr).toContain('first: timeout')
      expect(child.stdout, child.stderr).toContain('second: ok 2')
      expect(child.code, child.stderr).toBe(0)
      expect(child.signal).toBeNull()
    },
    90_000,
    inline ? INLINE_PROCESS : undefined,
  )

  s.it(
    'liveness: process.exit() right after a timed-out run exits cleanly (code 0, no signal, promptly)',
    async () => {
      const child = await runFixture('exit-after-timeout.ts', [s.backend], 60_000)
      expect(child.stdout, child.stderr).toContain('kind: timeout')
      expect(child.code, child.stderr).toBe(0)
      expect(child.signal, child.stderr).toBeNull()
      // tsx compiles the fixture and its imports (a few seconds on a loaded machine); a deadlock would hit the kill.
      expect(child.elapsedMs).toBeLessThan(30_000)
    },
    90_000,
    inline ? INLINE_PROCESS : undefined,
  )
}
