/**
 * A runtime for the security battery that runs every program in a *resumed* sandbox session: each run
 * gets a session of its own, which a first program seeds (see `SEED`), which is then suspended to sealed bytes and resumed, and only then runs the battery's
 * program. So every hostile program meets an engine whose memory came back from a snapshot.
 */
import type { CodeRunRequest, CodeRunResult, CodeRuntime } from '@ptc/sandbox'

/**
 * The seed leaves a heap that is not the booted one (objects, strings, a closure reachable only from a
 * pending promise job the battery's program will pump) and no global of its own, so the battery's
 * checks of the global object hold as in a fresh run.
 */
const SEED = `globalThis.seeded = { at: 1, text: 'x'.repeat(10000) }
{ const kept = [globalThis.seeded, new Map([[1, 'one']])]; Promise.resolve().then(() => kept.length).then(() => 0).then(() => 0) }
delete globalThis.seeded
return 1`

let sessions = 0

export function resumedSessionRuntime(inner: CodeRuntime): CodeRuntime {
  const { suspendSession, resumeSession, endSession } = inner
  if (suspendSession === undefined || resumeSession === undefined || endSession === undefined)
    throw new Error(`${inner.name} cannot suspend sessions`)
  const run = async (request: CodeRunRequest): Promise<CodeRunResult> => {
    const session = `battery-${++sessions}`
    // The seed, the suspension and the program are one run for the battery: the request's wall and signal bound
    // all of it. A seed that waited for a place past that wall, was aborted or found the queue full is the run's
    // outcome (the queueing tests wait for exactly that); any other seed failure is the battery's own bug.
    const startedAt = performance.now()
    const wallMs = request.limits?.wallMs ?? inner.limits.wallMs
    const seeded = await inner.run({
      code: SEED,
      language: 'javascript',
      bindings: [],
      call: () => Promise.reject(new Error('no tools')),
      session,
      limits: { wallMs },
      ...(request.signal !== undefined && { signal: request.signal }),
    })
    if (seeded.error !== undefined) {
      if (seeded.error.kind === 'timeout' || seeded.error.kind === 'abort' || seeded.error.kind === 'limit')
        return seeded
      throw new Error(`the seed program failed: ${seeded.error.message}`)
    }
    const bytes = await suspendSession.call(inner, session)
    if (bytes === undefined) throw new Error('the seeded session had no state to suspend')
    await resumeSession.call(inner, session, bytes)
    try {
      const left = Math.max(1, Math.round(wallMs - (performance.now() - startedAt)))
      return await inner.run({ ...request, session, limits: { ...request.limits, wallMs: left } })
    } finally {
      await endSession.call(inner, session)
    }
  }
  return {
    name: `${inner.name} (resumed session)`,
    limits: inner.limits,
    run,
    endSession: (key) => endSession.call(inner, key),
    dispose: () => inner.dispose(),
    [Symbol.asyncDispose]: () => inner.dispose(),
  }
}
