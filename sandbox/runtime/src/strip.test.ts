import { spawnSync } from 'node:child_process'
import { availableParallelism } from 'node:os'
import { fileURLToPath } from 'node:url'
import { afterEach, describe, expect, test, vi } from 'vitest'
import {
  INLINE_STRIP_UNITS,
  PREPARE_IDLE_MS,
  _idlePrepareWorkers,
  prepareOffThread,
  prepareWorkerCounts,
  type PrepareJob,
} from './strip.js'

/** A TypeScript program past `INLINE_STRIP_UNITS`, different for each `n`. */
const long = (n: number): string => `const a: number = ${n}\n// ${'x'.repeat(INLINE_STRIP_UNITS)}\nreturn a as number`
const job = (n: number): PrepareJob => ({ code: long(n), typescript: true, session: false })
const never = new AbortController().signal

async function prepared(n: number): Promise<string> {
  const done = await prepareOffThread(job(n), never)
  if (done?.stripped.ok !== true) throw new Error(`not prepared: ${JSON.stringify(done)}`)
  return done.stripped.code
}

describe('prepare workers (programs longer than INLINE_STRIP_UNITS)', () => {
  afterEach(() => {
    vi.useRealTimers()
  })

  test('one worker prepares a series of programs, each answer its own', async () => {
    const before = prepareWorkerCounts().started
    for (let n = 0; n < 4; n++) {
      const code = await prepared(n)
      expect(code.startsWith(`const a = ${n}\n`)).toBe(true)
      expect(code).toMatch(/\nreturn a\s*$/)
    }
    expect(prepareWorkerCounts().started - before).toBeLessThanOrEqual(1)
    expect(prepareWorkerCounts().idle).toBeGreaterThanOrEqual(1)
  })

  test('programs prepared at once use at most one worker per core, and every worker waits for the next', async () => {
    const before = prepareWorkerCounts()
    const codes = await Promise.all(Array.from({ length: 6 }, (_, n) => prepared(10 + n)))
    codes.forEach((code, n) => expect(code.startsWith(`const a = ${10 + n}\n`)).toBe(true))
    const after = prepareWorkerCounts()
    expect(after.idle).toBeLessThanOrEqual(Math.max(1, availableParallelism()))
    expect(after.started - before.started).toBeLessThanOrEqual(Math.max(1, availableParallelism()))
    expect(after.idle).toBeGreaterThanOrEqual(1)
  })

  test('a session program gets its session source; a syntax error comes back with its line', async () => {
    const session = await prepareOffThread(
      { code: `var kept: number = 1\n${long(1)}`, typescript: true, session: true },
      never,
    )
    expect(session?.source?.split('\n')[0]).toMatch(/^var kept/)
    const broken = await prepareOffThread(
      { code: `// ${'x'.repeat(INLINE_STRIP_UNITS)}\nconst a: = 1`, typescript: true, session: false },
      never,
    )
    expect(broken?.stripped).toMatchObject({ ok: false, line: 2 })
    // The worker that reported the error prepares the next program.
    const started = prepareWorkerCounts().started
    expect(await prepared(2)).toMatch(/^const a = 2\n/)
    expect(prepareWorkerCounts().started).toBe(started)
  })

  test('an idle worker that died before its exit was seen does not fail the program it is given: a new worker prepares it', async () => {
    await prepared(0)
    const idle = _idlePrepareWorkers()
    expect(idle.length).toBeGreaterThanOrEqual(1)
    const before = prepareWorkerCounts().started
    // Every idle worker is ending, and none has told the host yet: the next program takes one of them.
    for (const worker of idle) void worker.terminate()
    expect(prepareWorkerCounts().idle).toBe(idle.length)
    expect(await prepared(3)).toMatch(/^const a = 3\n/)
    expect(prepareWorkerCounts().started).toBe(before + 1)
  })

  test('an aborted program ends the worker that prepared it; the next program gets another', async () => {
    await prepared(0)
    const before = prepareWorkerCounts()
    const stop = new AbortController()
    const pending = prepareOffThread(job(1), stop.signal)
    stop.abort()
    expect(await pending).toBeUndefined()
    expect(prepareWorkerCounts().idle).toBe(before.idle - 1)
    expect(await prepared(2)).toMatch(/^const a = 2\n/)
    // Another idle worker, or a new one when the aborted worker was the only one.
    expect(prepareWorkerCounts().started).toBe(before.started + (before.idle === 1 ? 1 : 0))
  })

  test(`an idle worker ends after ${PREPARE_IDLE_MS} ms without a program`, async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] })
    // The worker that prepares this program waits on the fake clock (workers idle before wait on the real one).
    await prepared(0)
    const idle = prepareWorkerCounts().idle
    expect(idle).toBeGreaterThanOrEqual(1)
    vi.advanceTimersByTime(PREPARE_IDLE_MS - 1)
    expect(prepareWorkerCounts().idle).toBe(idle)
    vi.advanceTimersByTime(1)
    expect(prepareWorkerCounts().idle).toBe(idle - 1)
    vi.useRealTimers()
    const started = prepareWorkerCounts().started
    expect(await prepared(1)).toMatch(/^const a = 1\n/)
    expect(prepareWorkerCounts().started).toBe(started + (idle === 1 ? 1 : 0))
  })

  test('a waiting worker does not keep its process alive', () => {
    // A process that prepares a long program and returns. Were its idle worker still counted, the process
    // would live until the worker's idle time ends it (PREPARE_IDLE_MS): it must end long before.
    const strip = fileURLToPath(new URL('./strip.ts', import.meta.url))
    const script = [
      `const { prepareOffThread, INLINE_STRIP_UNITS } = await import(${JSON.stringify(strip)})`,
      "const code = `const a: number = 1\\n// ${'x'.repeat(INLINE_STRIP_UNITS)}`",
      'const done = await prepareOffThread({ code, typescript: true, session: false }, new AbortController().signal)',
      'const answered = performance.now()',
      "process.on('exit', () => console.log(JSON.stringify({ ok: done.stripped.ok, lived: performance.now() - answered })))",
    ].join('\n')
    const child = spawnSync(
      process.execPath,
      ['--import', 'tsx', '--conditions=@ptc/source', '--input-type=module', '-e', script],
      { encoding: 'utf8', timeout: 60_000 },
    )
    expect(child.status, child.stderr).toBe(0)
    const seen = JSON.parse(child.stdout.trim()) as { ok: boolean; lived: number }
    expect(seen.ok).toBe(true)
    expect(seen.lived).toBeLessThan(PREPARE_IDLE_MS / 2)
  })
})
