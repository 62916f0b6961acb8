import { expect } from 'vitest'
import type { CodeRunError, JsonValue } from '../types.js'
import { INLINE_STRIP_UNITS } from '../strip.js'
import { DEFAULT_LIMITS } from '../limits.js'
import { stopError, type StopReason } from '../stop.js'
import { echo, sleep, type SuiteContext } from './context.js'

/** The one wording of a stop (`stopError`) for the limits a test sets. */
const stopped = (reason: StopReason, limits: Partial<typeof DEFAULT_LIMITS>) =>
  stopError(reason, { ...DEFAULT_LIMITS, ...limits })

/**
 * `error` is the stop the host made for `reason`: its kind and wording, which a backend may follow with a note in
 * brackets on how it stopped the engine (a QuickJS worker that did not stop within its grace, on a loaded
 * machine, is terminated: "… (the engine did not stop within 50 ms and its worker was terminated)").
 */
function expectHostStop(
  error: CodeRunError | undefined,
  reason: StopReason,
  limits: Partial<typeof DEFAULT_LIMITS>,
): void {
  const expected = stopped(reason, limits)
  expect(error?.kind).toBe(expected.kind)
  expect(error?.message.startsWith(expected.message), `${error?.message} starts with ${expected.message}`).toBe(true)
  expect(error?.message.slice(expected.message.length)).toMatch(/^(?: \(.+\))?$/)
}

/** Every limit and the failure kind it produces, worded the same on every backend. */
export function limitTests(s: SuiteContext): void {
  s.it('the output budget is exact to the byte for logs (multi-byte UTF-8, one separator byte per entry)', async () => {
    const code = 'console.log("aé")\nconsole.log("aé")\nconsole.log("aé")'
    const fits = await s.run(code, { limits: { maxOutputBytes: 12 } })
    expect(fits.error).toBeUndefined()
    expect(fits.logs).toEqual(['aé', 'aé', 'aé'])
    const over = await s.run(code + '\nreturn 1', { limits: { maxOutputBytes: 11 } })
    expect(over.error?.kind).toBe('output-limit')
    expect(over.logs).toEqual(['aé', 'aé'])
    expect('value' in over).toBe(false)
  })

  s.it('a log entry or a value far past the budget fails the run as one just past it does', async () => {
    const limits = { maxOutputBytes: 1000 }
    const log = await s.run('console.log("first")\nconsole.log("x".repeat(5e6))\nreturn 1', { limits })
    // The size of the entry is said where the backend measured it (isolated-vm refuses a long log before it is measured).
    const head = '^output limit of 1000 bytes \\(maxOutputBytes\\) exceeded: '
    const tail =
      ' did not fit after 6 bytes of earlier output; print or return less \\(the fields needed or a summary, not whole tool results\\)$'
    expect(log.error?.kind).toBe('output-limit')
    expect(log.error?.message).toMatch(new RegExp(`${head}a log entry( of at least 5000001 bytes)?${tail}`))
    expect(log.logs).toEqual(['first'])
    const value = await s.run('console.log("first")\nreturn "x".repeat(5e6)', { limits })
    expect(value.error?.kind).toBe('output-limit')
    expect(value.error?.message).toMatch(new RegExp(`${head}the return value( of at least 5000002 bytes)?${tail}`))
    expect(value.logs).toEqual(['first'])
  })

  s.it('the completion value draws from the same budget', async () => {
    // console.log("😀") is 4 bytes + 1 separator; the value "é€" is 7 bytes of JSON text ("é€" with quotes).
    const code = 'console.log("😀")\nreturn "é€"'
    const fits = await s.run(code, { limits: { maxOutputBytes: 12 } })
    expect(fits.error).toBeUndefined()
    expect(fits.value).toBe('é€')
    const over = await s.run(code, { limits: { maxOutputBytes: 11 } })
    expect(over.error?.kind).toBe('output-limit')
    expect(over.logs).toEqual(['😀'])
  })

  s.it('an output flood stops the run with output-limit', async () => {
    const r = await s.run('while (true) console.log("flood flood flood")', {
      limits: { maxOutputBytes: 1000, wallMs: 5000 },
    })
    expect(r.error?.kind).toBe('output-limit')
    expect(r.logs.length).toBe(Math.floor(1000 / 18))
  })

  s.it(
    'empty log entries are not free: each costs its separator, and none is dropped without output-limit',
    async () => {
      const r = await s.run('for (let i = 0; i < 300000; i++) console.log()\nreturn "done"', {
        limits: { maxOutputBytes: 1000, wallMs: 10_000 },
      })
      expect(r.error?.kind).toBe('output-limit')
      expect(r.logs).toHaveLength(1000)
      expect(r.logs.every((l) => l === '')).toBe(true)
      const fits = await s.run('for (let i = 0; i < 999; i++) console.log()\nreturn 1', {
        limits: { maxOutputBytes: 1000 },
      })
      expect(fits.error).toBeUndefined()
      expect(fits.logs).toHaveLength(999)
    },
  )

  s.it('a lone surrogate in a log arrives as one U+FFFD and is charged its 3 bytes', async () => {
    const code = 'console.log("a\\ud800b", "\\udc00")\nconsole.log("\\ud83d\\ude00")'
    // "a\ufffdb \ufffd" is 9 bytes + 1, the emoji 4 + 1: 15 bytes.
    const fits = await s.run(code, { limits: { maxOutputBytes: 15 } })
    expect(fits.error).toBeUndefined()
    expect(fits.logs).toEqual(['a\ufffdb \ufffd', '😀'])
    const over = await s.run(code, { limits: { maxOutputBytes: 14 } })
    expect(over.error?.kind).toBe('output-limit')
    expect(over.logs).toEqual(['a\ufffdb \ufffd'])
  })

  s.it('a busy loop hits the CPU budget', async () => {
    const r = await s.run('let i = 0\nwhile (true) { i++ }', { limits: { cpuMs: 200, wallMs: 5000 } })
    expect(r.error).toEqual(stopped('cpu', { cpuMs: 200 }))
    expect(r.stats.wallMs).toBeLessThan(3000)
  })

  s.it('a busy loop after an await and inside catch hits the CPU budget', async () => {
    const r = await s.run('await tools.echo({})\ntry { throw 1 } catch { while (true) {} }', {
      limits: { cpuMs: 200, wallMs: 5000 },
    })
    expect(r.error).toEqual(stopped('cpu', { cpuMs: 200 }))
  })

  s.it('time spent waiting on the host is not charged as CPU', async () => {
    const r = await s.run('for (let i = 0; i < 3; i++) await tools.slow({})\nreturn 1', {
      limits: { cpuMs: 100, wallMs: 5000 },
      call: async (name, args) => (await sleep(80), echo(name, args)),
    })
    expect(r.error).toBeUndefined()
    expect(r.value).toBe(1)
    expect(r.stats.cpuMs).toBeLessThan(100)
    expect(r.stats.wallMs).toBeGreaterThanOrEqual(200)
  })

  s.it('the wall-clock ceiling holds while waiting on the host', async () => {
    let signalled = false
    const r = await s.run('await tools.slow({})', {
      limits: { wallMs: 200 },
      call: (_name, _args, signal) =>
        new Promise<JsonValue>((resolve) => {
          signal.addEventListener('abort', () => ((signalled = true), resolve(null)))
        }),
    })
    expectHostStop(r.error, 'wall', { wallMs: 200 })
    expect(r.stats.wallMs).toBeLessThan(1500)
    expect(signalled).toBe(true)
  })

  s.it(
    'a memory bomb hits the memory limit',
    async () => {
      const r = await s.run('const a = []\nwhile (true) a.push(new Array(10000).fill(a.length))', {
        limits: { memoryBytes: 32 * 1024 * 1024, wallMs: 10_000 },
      })
      expect(r.error).toEqual(stopped('memory', { memoryBytes: 32 * 1024 * 1024 }))
    },
    20_000,
  )

  s.it('the sub-call count is limited', async () => {
    let calls = 0
    const r = await s.run('for (let i = 0; i < 10; i++) await tools.echo({ i })', {
      limits: { maxSubCalls: 5 },
      call: async (name, args) => (calls++, echo(name, args)),
    })
    expectHostStop(r.error, 'limit-calls', { maxSubCalls: 5 })
    expect(calls).toBe(5)
  })

  s.it('the pending sub-call cap is limited', async () => {
    const r = await s.run('await Promise.all(Array.from({ length: 10 }, (_, i) => tools.slow({ i })))', {
      limits: { maxPendingSubCalls: 4 },
      call: async (name, args) => (await sleep(50), echo(name, args)),
    })
    expectHostStop(r.error, 'limit-pending', { maxPendingSubCalls: 4 })
  })

  s.it(
    'the arguments of the pending sub-calls are bounded by memoryBytes: a guest cannot make the host hold its memory once per call',
    async () => {
      const answers: (() => void)[] = []
      let started = 0
      // Each call passes the same 1 MB string (one copy in the guest, one argument text per call in the host);
      // the quick call between them makes every backend take the slow one before the next starts.
      const code =
        'const s = "x".repeat(1e6)\nconst ps = []\nfor (let i = 0; i < 40; i++) { ps.push(tools.slow({ s }).catch(() => 0)); await tools.echo({}) }\nawait Promise.all(ps)'
      const r = await s.run(code, {
        limits: { memoryBytes: 16 * 1024 * 1024, maxPendingSubCalls: 100 },
        call: (name) => {
          if (name !== 'slow') return echo(name, {})
          started++
          return new Promise((resolve) => answers.push(() => resolve(null)))
        },
      })
      for (const answer of answers) answer()
      expectHostStop(r.error, 'limit-args', { memoryBytes: 16 * 1024 * 1024 })
      // 16 calls of 1 000 008 characters fit in 16 MiB, the 17th does not.
      expect(started).toBe(16)
    },
    20_000,
  )

  s.it(
    'results that finish together arrive in batches: a program can take in more than fits its memory at once',
    async () => {
      // Twenty 1 MB results answered together: 20 MB of text in one batch, and its parse, did not fit 24 MiB on
      // isolated-vm; delivered a quarter of the memory at a time, each is counted and dropped.
      const answers: (() => void)[] = []
      const code =
        'let total = 0\nawait Promise.all(Array.from({ length: 20 }, () => tools.slow({}).then((r) => { total += r.length })))\nreturn total'
      const pending = s.run(code, {
        limits: { memoryBytes: 24 * 1024 * 1024 },
        call: () => new Promise((resolve) => answers.push(() => resolve('r'.repeat(1_000_000)))),
      })
      while (answers.length < 20) await sleep(5)
      for (const answer of answers) answer()
      const r = await pending
      expect(r.error).toBeUndefined()
      expect(r.value).toBe(20_000_000)
    },
    20_000,
  )

  s.it('deep recursion is a catchable guest error and the host survives', async () => {
    const r = await s.run('function f(n) { return f(n + 1) + 1 }\ntry { f(0) } catch (e) { return "caught" }')
    expect(r.value).toBe('caught')
    const r2 = await s.run('function f(n) { return f(n + 1) + 1 }\nf(0)')
    expect(r2.error?.kind).toBe('exception')
  })

  s.it('stats report CPU time, wall time and sub-calls', async () => {
    const r = await s.run(
      'await tools.echo({})\nawait tools.echo({})\nlet x = 0\nfor (let i = 0; i < 1e5; i++) x += i\nreturn x',
    )
    expect(r.stats.subCalls).toBe(2)
    expect(r.stats.cpuMs).toBeGreaterThan(0)
    expect(r.stats.wallMs).toBeGreaterThanOrEqual(r.stats.cpuMs * 0.5)
    expect(r.stats.queueMs).toBeGreaterThanOrEqual(0)
    expect(r.stats.queueMs).toBeLessThanOrEqual(r.stats.wallMs)
  })

  s.it('a program over maxProgramBytes ends as limit before it runs; one that fits runs', async () => {
    const code = 'console.log("ran")\nreturn "é"'
    const over = await s.run(code, { limits: { maxProgramBytes: 29 } })
    expect(over.error).toEqual({
      kind: 'limit',
      message: 'the program has 30 bytes, over the maxProgramBytes limit of 29',
    })
    expect(over.logs).toEqual([])
    expect(over.stats.subCalls).toBe(0)
    const fits = await s.run(code, { limits: { maxProgramBytes: 30 } })
    expect(fits.value).toBe('é')
  })

  s.it('a long TypeScript program runs, with error positions in its own lines', async () => {
    const line = 'x = (x + 1) as number\n'
    const code = `let x: number = 0\n${line.repeat(2000)}if (x === 2000) throw new Error('at the end')`
    const r = await s.run(code)
    expect(r.error?.kind).toBe('exception')
    // Past INLINE_STRIP_UNITS: stripped on a worker thread. Engines differ on the column of a throw.
    expect(code.length).toBeGreaterThan(INLINE_STRIP_UNITS)
    expect(r.error?.message).toMatch(/^Error: at the end \(line 2002, column \d+\)$/)
  })
}
