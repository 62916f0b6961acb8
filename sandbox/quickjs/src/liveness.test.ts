import { spawn } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { afterAll, describe, expect, test } from 'vitest'
import type { CodeRunRequest, CodeRunResult } from '@ptc/sandbox'
import { WorkerPool } from './host/pool.js'
import { QuickJSCodeRuntime } from './runtime.js'
import { createQuickJSRuntime } from './index.js'

const ROOT = fileURLToPath(new URL('../../../', import.meta.url))
/** Generous bound past a wall ceiling for an answer (the measured figures are in the change's report). */
const BOUND_MS = 1500
/** Overruns any wall: the interrupt handler is polled every ~10 000 bytecodes, each here a long native join. */
const HOSTILE = 'const a = new Array(2e6).fill(123456789); for (;;) a.join()'
const call = async (): Promise<null> => null

function request(code: string, extra: Partial<CodeRunRequest> = {}): CodeRunRequest {
  return { code, bindings: ['echo'], call, language: 'javascript', ...extra }
}

async function timed(p: Promise<CodeRunResult>): Promise<{ result: CodeRunResult; elapsedMs: number }> {
  const t0 = performance.now()
  const result = await p
  return { result, elapsedMs: performance.now() - t0 }
}

test('a script with nothing else pending stays alive while its runs wait for a replacement worker (exit 0, both outcomes)', async () => {
  const child = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve, reject) => {
    const p = spawn(
      process.execPath,
      [
        '--conditions=@ptc/source',
        '--import',
        'tsx',
        fileURLToPath(new URL('./fixtures/pending-runs.ts', import.meta.url)),
      ],
      { cwd: ROOT, env: { ...process.env, NODE_OPTIONS: '' }, stdio: ['ignore', 'pipe', 'pipe'] },
    )
    let stdout = ''
    let stderr = ''
    p.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk))
    p.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk))
    const killer = setTimeout(() => p.kill('SIGKILL'), 60_000)
    p.on('error', reject)
    p.on('close', (code) => {
      clearTimeout(killer)
      resolve({ code, stdout, stderr })
    })
  })
  expect(child.stdout, child.stderr).toContain('hostile: timeout (worker terminated)')
  expect(child.stdout, child.stderr).toContain('benign: ok 2')
  expect(child.code, child.stderr).toBe(0)
}, 90_000)

describe('the watchdog on a worker pool', () => {
  const pool = new WorkerPool({ size: 1, variant: 'quickjs', warmBytes: 256 * 1024 * 1024 })
  const runtime = new QuickJSCodeRuntime({}, pool)
  afterAll(() => runtime.dispose())

  test('a native builtin past the wall answers by the wall, its thread exits, the pool keeps its size and serves the next run', async () => {
    expect((await runtime.run(request('return 0'))).value).toBe(0)
    for (let i = 0; i < 3; i++) {
      const { result, elapsedMs } = await timed(
        runtime.run(request(HOSTILE, { limits: { wallMs: 700, cpuMs: 60_000 } })),
      )
      expect(result.error?.kind).toBe('timeout')
      expect(result.error?.message).toMatch(/terminated/)
      expect(elapsedMs).toBeLessThan(700 + BOUND_MS)
      expect(result.stats.wallMs).toBeLessThan(700 + BOUND_MS)
      expect(pool.workers).toBe(1)
      // The terminated thread is gone soon after the answer (it runs no guest code meanwhile).
      const t0 = performance.now()
      while (pool.exiting > 0 && performance.now() - t0 < 5000) await new Promise((resolve) => setTimeout(resolve, 5))
      expect(pool.exiting).toBe(0)
      const next = await runtime.run(request('return (await tools.echo({})) === null ? "next" : "?"'))
      expect(next.value).toBe('next')
    }
  }, 60_000)

  test('a guest that keeps QuickJS from polling for interrupts is stopped at its CPU budget, not at its wall', async () => {
    // Both make QuickJS poll its interrupt handler minutes apart (every 10 000 calls or jumps): long native joins
    // in a loop, and a recursion that catches its own stack overflows (a backtrace of the whole stack each), with
    // a long native call in each catch. The engine cannot stop them at their budget; the host's watchdog does.
    const programs = [
      HOSTILE,
      "function f() { try { return f() } catch (e) { 'x'.repeat(1e6).split('').join(''); return f() } }\nreturn f()",
    ]
    for (const code of programs) {
      const result = await runtime.run(request(code, { limits: { cpuMs: 300, wallMs: 20_000 } }))
      expect(result.error, code).toEqual({ kind: 'timeout', message: 'CPU time limit of 300 ms exceeded' })
      expect(result.stats.cpuMs, code).toBeGreaterThanOrEqual(300)
      expect(pool.workers).toBe(1)
      expect((await runtime.run(request('return (await tools.echo({})) === null ? "next" : "?"'))).value).toBe('next')
    }
  }, 60_000)

  test('a run whose deadline passes while its worker boots ends as timeout by its wall', async () => {
    const fresh = new QuickJSCodeRuntime({ poolSize: 1 })
    try {
      // The first run spawns the worker; booting it (loader, module) takes far longer than 30 ms.
      const { result, elapsedMs } = await timed(fresh.run(request('return 1', { limits: { wallMs: 30 } })))
      expect(result.error?.kind).toBe('timeout')
      expect(result.error?.message).toMatch(/before the program started/)
      expect(result.stats.queueMs).toBe(result.stats.wallMs)
      expect(elapsedMs).toBeLessThan(30 + BOUND_MS)
      expect((await fresh.run(request('return 2'))).value).toBe(2)
    } finally {
      await fresh.dispose()
    }
  }, 30_000)

  test('a run aborted while its worker boots ends as abort at once, and the worker then serves the next run', async () => {
    const fresh = new QuickJSCodeRuntime({ poolSize: 1 })
    try {
      const controller = new AbortController()
      setTimeout(() => controller.abort(), 20)
      const { result, elapsedMs } = await timed(fresh.run(request('return 1', { signal: controller.signal })))
      expect(result.error?.kind).toBe('abort')
      expect(elapsedMs).toBeLessThan(20 + BOUND_MS)
      expect((await fresh.run(request('return 2'))).value).toBe(2)
    } finally {
      await fresh.dispose()
    }
  }, 30_000)
})

describe('an inline run whose program calls tools in a loop', () => {
  // On the calling thread, a delivered result pumps the guest, whose next call comes back through the host
  // in promise jobs alone: without a turn of the event loop now and then, nothing else on the thread ran
  // until the run ended (no timer, its own wall ceiling's included; no other run; no I/O).
  const runtime = createQuickJSRuntime({ isolation: 'inline', maxConcurrentRuns: 2 })
  afterAll(() => runtime.dispose())
  const LOOP = 'for (;;) await tools.echo({})'
  const loopLimits = { wallMs: 1500, cpuMs: 60_000, maxSubCalls: 1e9 }

  test('leaves the event loop its turns: a timer set before the run fires during it, and the wall ends it', async () => {
    expect((await runtime.run(request('return 0'))).value).toBe(0)
    let firedDuringRun = false
    let ended = false
    const timer = setTimeout(() => (firedDuringRun = !ended), 0)
    const result = await runtime.run(request(LOOP, { limits: loopLimits }))
    ended = true
    clearTimeout(timer)
    expect(result.error?.kind).toBe('timeout')
    expect(result.error?.message).toMatch(/wall-clock limit of 1500 ms/)
    expect(result.stats.subCalls).toBeGreaterThan(0)
    expect(firedDuringRun).toBe(true)
  }, 30_000)

  test('another run on the same thread is served while it loops, and the abort that run then sends stops the loop', async () => {
    const controller = new AbortController()
    const order: string[] = []
    const looping = runtime.run(request(LOOP, { limits: loopLimits, signal: controller.signal })).then((r) => {
      order.push('loop')
      return r
    })
    const other = runtime
      .run(request('return await tools.echo({ n: 2 })', { call: async (_name, args) => args }))
      .then((r) => {
        order.push('other')
        controller.abort()
        return r
      })
    const [loop, done] = await Promise.all([looping, other])
    expect(done.value).toEqual({ n: 2 })
    expect(loop.error?.kind).toBe('abort')
    expect(order).toEqual(['other', 'loop'])
  }, 30_000)
})
