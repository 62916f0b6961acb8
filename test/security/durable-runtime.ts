/**
 * A runtime for the security battery that runs every program inside a *resumed durable run*
 * (`CodeRunRequest.durable`, `openRun`, `resumeRun`): each run first starts a seed program (see `seed`)
 * as a durable run whose one sub-call the host parks (`parkCall`), so the seed suspends to sealed
 * bytes; those bytes are opened and resumed, the parked call is answered with the battery's program,
 * and the seed runs it as the body of an async function (the guest's own `AsyncFunction` constructor,
 * reached as `(async () => {}).constructor`) and returns its value. So every hostile program runs in
 * an engine whose memory, prelude state and counters came back from a suspended run.
 *
 * What the wrapper does so that the battery observes what it would of a plain run, and why each is honest:
 * - The seed's parked call goes to the request's first binding with an argument only this wrapper knows
 *   (a random nonce), so the guest's `tools` object is exactly the battery's; with no bindings (the suite's
 *   warm-up), a binding `__resume` is added. That call is the wrapper's, not the program's: the run is
 *   given one sub-call more than the request's `maxSubCalls` (the program keeps exactly its budget) and
 *   `stats.subCalls` counts the program's calls only (a `limit` message still names the raised cap). Every
 *   other call goes to `request.call` unchanged (same arguments, same signal, a synchronous throw stays
 *   synchronous).
 * - The limits, `signal` and `onLog` go to both halves. A resumed run keeps the limits it started with,
 *   its CPU, output and sub-call counts, and what was left of its wall when it suspended (the time between
 *   the halves, spent on the host opening the state, is not charged by the runtime); `stats.wallMs` here is
 *   measured from this `run()` call to the answer, so it includes that time. `stats.cpuMs` is the resumed
 *   run's (it carries the seed's); `queueMs` adds the two halves' waits; `logs` are both halves'.
 * - TypeScript is stripped on the host with the runtime's own stripper (`stripTypeScript`, long programs off
 *   the thread, as `acceptRun` does) while the parked call is answered, so it is charged to the run's wall as
 *   it would be. A program the stripper refuses is handed to the guest as it is: its syntax error surfaces as
 *   an `exception` (a SyntaxError thrown by the AsyncFunction constructor), not a `syntax` failure. The
 *   line and column in a guest error's message are the seed's (the program's own frames have no file name).
 * - `maxProgramBytes` bounds the run's program text, the seed here; the battery's program reaches the guest
 *   as a call result, which nothing but memory bounds. The battery's test of that limit does not apply.
 * - A run the seed did not get to suspend (refused, queued past its wall, aborted) answers with the seed's
 *   result. `dispose()` between the halves (`openRun`/`resumeRun` reject with SANDBOX_DISPOSED) answers as
 *   `abort`, as the runtime answers a run it had admitted when `dispose()` began.
 */
import { randomBytes } from 'node:crypto'
import { SandboxUsageError } from '@ptc/sandbox'
import { INLINE_STRIP_UNITS, stripTypeScript, stripTypeScriptOffThread } from '@ptc/sandbox/backend'
import { parkCall, type SuspendedRun } from '@ptc/sandbox/session'
import type { CodeRunRequest, CodeRunResult, CodeRunStats, CodeRuntime, JsonValue } from '@ptc/sandbox'

/** The argument key of the seed's parked call; its value is the run's nonce. */
const MARK = '__durableBattery'

/** The binding added when the request has none (the seed needs one to park). */
export const RESUME_BINDING = '__resume'

/**
 * The seed: it keeps some state of its own alive across the suspension (a closure and a reaction on the
 * parked call's promise, which runs after the resume), makes no global, and then runs the program the
 * parked call answers with. `return await` (not `return`): the seed adopts the program's promise without
 * looking up a `then` the program may have replaced.
 */
function seed(binding: string, nonce: string): string {
  return `const AsyncFunction = (async () => {}).constructor
const kept = { text: 'x'.repeat(10000), map: new Map([[1, 'one']]) }
const answer = tools[${JSON.stringify(binding)}](${JSON.stringify({ [MARK]: nonce })})
const restored = answer.then(() => kept.map.get(1) + kept.text.length)
const body = await answer
if (typeof body !== 'string' || (await restored) !== 'one10000') throw new Error('the seed did not come back intact')
return await AsyncFunction(body)()`
}

let runs = 0

function isMarker(args: JsonValue, nonce: string): boolean {
  return (
    typeof args === 'object' &&
    args !== null &&
    !Array.isArray(args) &&
    args[MARK] === nonce &&
    Object.keys(args).length === 1
  )
}

function round(ms: number): number {
  return Math.round(ms * 1000) / 1000
}

/** The program as the guest compiles it: stripped of TypeScript on the host (the text as given when stripping fails). */
async function guestBody(request: CodeRunRequest, signal: AbortSignal): Promise<string> {
  const { code } = request
  if (request.language === 'javascript') return code
  const stripped =
    code.length <= INLINE_STRIP_UNITS ? stripTypeScript(code) : await stripTypeScriptOffThread(code, signal)
  if (stripped === undefined) throw new Error('the run ended while its program was being stripped')
  return stripped.ok ? stripped.code : code
}

export function resumedDurableRuntime(inner: CodeRuntime): CodeRuntime {
  const { openRun, resumeRun } = inner
  if (openRun === undefined || resumeRun === undefined) throw new Error(`${inner.name} cannot resume durable runs`)
  const run = async (request: CodeRunRequest): Promise<CodeRunResult> => {
    if (request.durable !== undefined || request.session !== undefined) {
      throw new SandboxUsageError(
        'the resumed-durable battery wrapper runs plain requests only (no durable, no session)',
      )
    }
    const t0 = performance.now()
    const key = `battery-durable-${++runs}`
    const nonce = randomBytes(16).toString('hex')
    const binding = request.bindings[0] ?? RESUME_BINDING
    const bindings = request.bindings.length > 0 ? request.bindings : [RESUME_BINDING]
    const maxSubCalls = (request.limits?.maxSubCalls ?? inner.limits.maxSubCalls) + 1
    const { signal, onLog } = request
    const seeded = await inner.run({
      code: seed(binding, nonce),
      language: 'javascript',
      bindings,
      call: (name, args) =>
        Promise.reject(
          isMarker(args, nonce) ? parkCall({ nonce }) : new Error(`the seed made an unexpected call to ${name}`),
        ),
      limits: { ...request.limits, maxSubCalls },
      durable: { key, data: () => ({ nonce }) },
      ...(signal !== undefined && { signal }),
      ...(onLog !== undefined && { onLog }),
    })
    const stats = (last: CodeRunStats, queueMs: number): CodeRunStats => ({
      cpuMs: Math.max(last.cpuMs, seeded.stats.cpuMs),
      wallMs: round(performance.now() - t0),
      queueMs: round(queueMs),
      // The seed's call is the wrapper's.
      subCalls: Math.max(0, last.subCalls - 1),
    })
    if (seeded.suspended === undefined) {
      if (seeded.error === undefined)
        throw new Error(`the seed ended without suspending: ${JSON.stringify(seeded.value)}`)
      return { ...seeded, stats: stats(seeded.stats, seeded.stats.queueMs) }
    }
    const parked = seeded.suspended.parked
    if (parked.length !== 1 || parked[0]?.name !== binding || !isMarker(parked[0].args, nonce)) {
      throw new Error(`the seed suspended on other calls than its own: ${JSON.stringify(parked)}`)
    }
    let opened: SuspendedRun | undefined
    try {
      opened = await openRun.call(inner, key, seeded.suspended.state)
      const data = opened.data as { nonce?: unknown } | undefined
      if (data?.nonce !== nonce) throw new Error('the opened run does not carry the data it was sealed with')
      let answered = false
      const resumed = await resumeRun.call(inner, opened, {
        call: (name, args, callSignal) => {
          if (!answered && name === binding && isMarker(args, nonce)) {
            answered = true
            return guestBody(request, callSignal)
          }
          return request.call(name, args, callSignal)
        },
        ...(signal !== undefined && { signal }),
        ...(onLog !== undefined && { onLog }),
      })
      return {
        ...resumed,
        logs: [...opened.logs, ...resumed.logs],
        stats: stats(resumed.stats, seeded.stats.queueMs + resumed.stats.queueMs),
      }
    } catch (error) {
      if (!(error instanceof SandboxUsageError && error.code === 'SANDBOX_DISPOSED')) throw error
      return {
        logs: [...(opened?.logs ?? [])],
        error: { kind: 'abort', message: 'the run was aborted: the runtime is disposed' },
        stats: stats({ ...seeded.stats, subCalls: 1 }, seeded.stats.queueMs),
      }
    }
  }
  return {
    name: `${inner.name} (resumed durable run)`,
    limits: inner.limits,
    run,
    dispose: () => inner.dispose(),
    [Symbol.asyncDispose]: () => inner.dispose(),
  }
}
