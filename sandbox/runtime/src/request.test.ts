import { describe, expect, test } from 'vitest'
import { SandboxUsageError } from './errors.js'
import { RunGate } from './gate.js'
import { DEFAULT_LIMITS } from './limits.js'
import { acceptRun } from './request.js'
import { wrapSessionSource } from './program.js'
import { INLINE_STRIP_UNITS } from './strip.js'
import type { CodeRunRequest, JsonValue } from './types.js'

const call = async (): Promise<JsonValue> => null
const request = (code: string, extra: Partial<CodeRunRequest> = {}): CodeRunRequest => ({
  code,
  bindings: [],
  call,
  ...extra,
})

/** A TypeScript program of about `units` UTF-16 units, with a type annotation on every line. */
function longProgram(units: number): string {
  const line = 'const value_0000000: number = 1 as number\n'
  return `${line.repeat(Math.ceil(units / line.length)).replaceAll('value_0000000', () => `v${Math.random().toString(36).slice(2, 12)}`)}return 1`
}

describe('acceptRun', () => {
  test('misuse rejects with SandboxUsageError', async () => {
    await expect(acceptRun({ code: 1 } as never, DEFAULT_LIMITS)).rejects.toThrow(SandboxUsageError)
    await expect(acceptRun(request('1', { language: 'python' as never }), DEFAULT_LIMITS)).rejects.toThrow(/language/)
    await expect(acceptRun(request('1', { limits: { maxProgramBytes: -1 } }), DEFAULT_LIMITS)).rejects.toThrow(
      /maxProgramBytes/,
    )
  })

  test('a program over maxProgramBytes ends as limit, counted in UTF-8 bytes', async () => {
    const fits = await acceptRun(request('return "éé"', { limits: { maxProgramBytes: 13 } }), DEFAULT_LIMITS)
    expect(fits.ok).toBe(true)
    const over = await acceptRun(request('return "éé"', { limits: { maxProgramBytes: 12 } }), DEFAULT_LIMITS)
    expect(over.ok).toBe(false)
    if (over.ok) return
    expect(over.result.error).toEqual({
      kind: 'limit',
      message: 'the program has 13 bytes, over the maxProgramBytes limit of 12',
    })
    // Far over the limit: refused without encoding the text, with the same kind.
    const huge = await acceptRun(request('x'.repeat(5_000_000)), DEFAULT_LIMITS)
    expect(!huge.ok && huge.result.error?.kind).toBe('limit')
    expect(!huge.ok && huge.result.error?.message).toMatch(/more than 1048576 bytes/)
  })

  test('a long TypeScript program is stripped off the calling thread, with the same result as inline', async () => {
    const code = longProgram(600 * 1024)
    let ticks = 0
    const probe = setInterval(() => ticks++, 5)
    try {
      const accepted = await acceptRun(request(code), DEFAULT_LIMITS)
      expect(accepted.ok).toBe(true)
      if (!accepted.ok) return
      expect(accepted.program.source).not.toMatch(/: number/)
      expect(accepted.program.source.split('\n')).toHaveLength(code.split('\n').length + 2)
      // The host thread kept running timers while the worker stripped (about 150 ms of work).
      expect(ticks).toBeGreaterThan(0)
    } finally {
      clearInterval(probe)
    }
    const bad = await acceptRun(request(`${code}\nconst x: = 1`), DEFAULT_LIMITS)
    expect(!bad.ok && bad.result.error?.kind).toBe('syntax')
    expect(!bad.ok && bad.result.error?.message).toMatch(new RegExp(`line ${code.split('\n').length + 1}`))
  })

  test("a long session program's source is made with its stripping, off the calling thread (not for an engine that makes it)", async () => {
    const code = longProgram(64 * 1024)
    for (const language of ['typescript', 'javascript'] as const) {
      const text = language === 'typescript' ? code : code.replaceAll(': number', '').replaceAll(' as number', '')
      const accepted = await acceptRun(request(text, { language, session: 's' }), DEFAULT_LIMITS)
      expect(accepted.ok).toBe(true)
      if (!accepted.ok) return
      expect(accepted.program.session).toBe(true)
      expect(accepted.program.body).not.toMatch(/: number/)
      expect(accepted.program.source).toBe(wrapSessionSource(accepted.program.body))
      // Its top-level declarations become the session's globals.
      expect(accepted.program.source.split('\n')[0]).toMatch(/^var v\w+, v\w+/)
    }
    const onEngine = await acceptRun(request(code, { session: 's' }), DEFAULT_LIMITS, undefined, {
      sessionSourceOnEngine: true,
    })
    expect(onEngine.ok && onEngine.program.body).not.toMatch(/: number/)
    // A session program whose JavaScript does not parse keeps the plain wrapper: the engine reports its syntax error.
    const broken = `${'// padding\n'.repeat(INLINE_STRIP_UNITS / 8)}const a = 1 +\nreturn a`
    const bad = await acceptRun(request(broken, { language: 'javascript', session: 's' }), DEFAULT_LIMITS)
    expect(bad.ok && bad.program.source).toBe(`(async function () {\n${broken}\n})`)
  })

  test('short programs are stripped inline; JavaScript is never stripped', async () => {
    expect(INLINE_STRIP_UNITS).toBeGreaterThan(1000)
    const ts = await acceptRun(request('const a: number = 1\nreturn a'), DEFAULT_LIMITS)
    expect(ts.ok && ts.program.source).toBe('(async function () {\nconst a = 1\nreturn a\n})')
    const js = await acceptRun(request('const a: number = 1', { language: 'javascript' }), DEFAULT_LIMITS)
    expect(js.ok && js.program.source).toBe('(async function () {\nconst a: number = 1\n})')
  })

  test('the wall deadline runs from the call and bounds the stripping', async () => {
    const before = performance.now()
    const accepted = await acceptRun(request('return 1', { limits: { wallMs: 5000 } }), DEFAULT_LIMITS)
    expect(accepted.ok).toBe(true)
    if (!accepted.ok) return
    expect(accepted.startedAt).toBeGreaterThanOrEqual(before)
    expect(accepted.deadline).toBe(accepted.startedAt + 5000)
    const slow = await acceptRun(request(longProgram(900 * 1024), { limits: { wallMs: 1 } }), DEFAULT_LIMITS)
    expect(!slow.ok && slow.result.error?.kind).toBe('timeout')
    expect(!slow.ok && slow.result.error?.message).toMatch(/before the program started/)
    expect(!slow.ok && slow.result.stats.queueMs).toBe(!slow.ok && slow.result.stats.wallMs)
  })

  test('an aborted signal ends the run before any work, and during a long strip', async () => {
    const pre = await acceptRun(request('return 1', { signal: AbortSignal.abort() }), DEFAULT_LIMITS)
    expect(!pre.ok && pre.result.error?.kind).toBe('abort')
    const controller = new AbortController()
    const pending = acceptRun(request(longProgram(900 * 1024), { signal: controller.signal }), DEFAULT_LIMITS)
    setTimeout(() => controller.abort(), 5)
    const during = await pending
    expect(!during.ok && during.result.error?.kind).toBe('abort')
  })

  test('the gate: a run waits for a place within its deadline; a full queue ends as limit', async () => {
    const gate = new RunGate(1, 1)
    const first = await acceptRun(request('return 1'), DEFAULT_LIMITS, gate)
    expect(first.ok).toBe(true)
    const waiting = acceptRun(request('return 2', { limits: { wallMs: 30_000 } }), DEFAULT_LIMITS, gate)
    const full = await acceptRun(request('return 3'), DEFAULT_LIMITS, gate)
    expect(!full.ok && full.result.error?.kind).toBe('limit')
    expect(!full.ok && full.result.error?.message).toMatch(/run queue is full/)
    if (first.ok) first.release()
    const second = await waiting
    expect(second.ok).toBe(true)
    const timedOut = await acceptRun(request('return 4', { limits: { wallMs: 30 } }), DEFAULT_LIMITS, gate)
    expect(!timedOut.ok && timedOut.result.error?.kind).toBe('timeout')
    if (second.ok) second.release()
    expect(gate.active).toBe(0)
  })

  test('a runtime disposed while a long program is prepared (its gate closed) stops the preparation', async () => {
    const gate = new RunGate(1, 0)
    const pending = acceptRun(request(longProgram(900 * 1024)), DEFAULT_LIMITS, gate)
    setTimeout(() => gate.close(), 5)
    const closed = await pending
    expect(!closed.ok && closed.result.error).toEqual({
      kind: 'abort',
      message: 'the run was aborted: the runtime is disposed',
    })
    expect(gate.active).toBe(0)
  })

  test("a run's place in the queue is weighed by its program's UTF-8 bytes", async () => {
    const gate = new RunGate(1, 10, 3000)
    const holder = await acceptRun(request('return 1'), DEFAULT_LIMITS, gate)
    const first = acceptRun(
      request(`return "${'é'.repeat(1000)}"`, { limits: { wallMs: 30_000 } }),
      DEFAULT_LIMITS,
      gate,
    )
    expect(gate.queuedBytes).toBe(2009)
    const refused = await acceptRun(request(`return "${'x'.repeat(1000)}"`), DEFAULT_LIMITS, gate)
    expect(!refused.ok && refused.result.error?.message).toMatch(
      /run queue is full \(1 runs running, 1 waiting with 2009 bytes of programs; it holds at most 10 runs and 3000 bytes\)/,
    )
    if (holder.ok) holder.release()
    const admitted = await first
    expect(admitted.ok).toBe(true)
    if (admitted.ok) admitted.release()
  })

  test('a run takes its place before its program is prepared: a full gate refuses a long program unprepared; a failed preparation gives the place back', async () => {
    const gate = new RunGate(1, 0)
    const holder = await acceptRun(request('return 1'), DEFAULT_LIMITS, gate)
    expect(holder.ok).toBe(true)
    const broken = `${longProgram(64 * 1024)}\nconst x: = 1`
    // Prepared first, it would be a syntax error: refused as limit, nothing stripped it.
    const refused = await acceptRun(request(broken), DEFAULT_LIMITS, gate)
    expect(!refused.ok && refused.result.error).toEqual({
      kind: 'limit',
      message:
        "the runtime's run queue is full (1 runs running, 0 waiting with 0 bytes of programs; it holds at most 0 runs and 16777216 bytes)",
    })
    if (holder.ok) holder.release()
    const bad = await acceptRun(request(broken), DEFAULT_LIMITS, gate)
    expect(!bad.ok && bad.result.error?.kind).toBe('syntax')
    const aborted = await acceptRun(request(longProgram(900 * 1024), { limits: { wallMs: 1 } }), DEFAULT_LIMITS, gate)
    expect(!aborted.ok && aborted.result.error?.kind).toBe('timeout')
    expect(gate.active).toBe(0)
  })
})
