import { DEFAULT_LIMITS } from '@ptc/sandbox'
import { wrapProgram } from '@ptc/sandbox/backend'
import type { EngineImage } from './image.js'
import type { ModuleCache } from './module-cache.js'
import { CONTROL_NONE, type EngineRunOutcome } from './protocol.js'
import { EngineRun } from './run.js'

/**
 * What a warm-up run does: what a program usually does (an async function, a sub-call and its answer,
 * JSON, a log, an error caught, array and string methods), so that V8 compiles the engine's WebAssembly
 * functions and the host code a run goes through before the first real run needs them.
 */
const WARM_UP_PROGRAM = wrapProgram(`const got = await tools.warm({ items: [1, 'two', { three: 3 }], ok: true })
let text = ''
try { text = JSON.stringify(JSON.parse('{"a":[1,2,{"b":null}]}')) + [3, 1, 2].sort().map((n) => n * 2).join(',') } catch (e) { text = String(e) }
try { await tools.warm({ fail: true }) } catch (e) { text += e.code }
console.log(text.length, got.ok)
return { text, got }`)

/** The answers the warm-up's two sub-calls get: a value, then a failure (as the host would send them). */
const ANSWERS = ['[[1,1,{"ok":true}]]', '[[2,0,"warm-up failure","TOOL_ERROR"]]']

/** How long an engine thread must have had no run before it runs the warm-up: a run asked sooner warms it itself. */
export const WARM_UP_AFTER_IDLE_MS = 50

/**
 * Runs the warm-up on `cache`'s loaded, idle image once `WARM_UP_AFTER_IDLE_MS` passed (never loading a module
 * of its own); the image goes back to the cache, or is dropped if the warm-up broke it. The returned function
 * cancels it: call it when a run comes first. The timer never keeps the thread alive.
 */
export function warmUpWhenIdle(cache: ModuleCache, memoryBytes: number): () => void {
  const timer = setTimeout(() => {
    const image = cache.idle(memoryBytes)
    if (image !== undefined)
      void warmUp(image, memoryBytes).then((outcome) => cache.release(image, outcome === undefined || outcome.broken))
  }, WARM_UP_AFTER_IDLE_MS)
  timer.unref()
  return () => clearTimeout(timer)
}

/**
 * Runs the warm-up program on `image` with no host: its sub-calls are answered here. The first real run on
 * this thread then finds most of what it runs compiled: a trivial first run asked a second after a runtime
 * was created took 20-28 ms in a worker and 10-19 inline, against 1-3 ms for the runs after it. Resolves
 * with the run's outcome (the image is reset, as after any run, unless `broken`), or undefined when it
 * could not start; never rejects.
 */
export function warmUp(image: EngineImage, memoryBytes: number): Promise<EngineRunOutcome | undefined> {
  return new Promise((resolve) => {
    let answered = 0
    let run: EngineRun | undefined = undefined
    const done = (outcome: EngineRunOutcome): void => resolve(outcome)
    try {
      run = new EngineRun(
        image,
        {
          source: WARM_UP_PROGRAM,
          bindings: ['warm'],
          limits: { ...DEFAULT_LIMITS, memoryBytes },
          wallRemainingMs: DEFAULT_LIMITS.wallMs,
        },
        {
          // Each call is answered once the pump that made it is over (a microtask: the whole warm-up runs
          // before this thread handles any message or timer).
          flush: (calls) => {
            for (let i = 0; i < calls.length; i++) {
              const answer = ANSWERS[answered++] ?? '[]'
              queueMicrotask(() => run?.deliver(answer, 1))
            }
          },
          done,
        },
        new Int32Array(new SharedArrayBuffer(4)).fill(CONTROL_NONE),
      )
      run.start()
    } catch {
      resolve(undefined)
    }
  })
}
