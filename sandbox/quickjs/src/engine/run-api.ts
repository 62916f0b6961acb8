import type { QuickJSHandle } from 'quickjs-emscripten-core'
import type { QueueCaps } from '@ptc/sandbox/backend'
import type { EngineImage } from './image.js'
import type { EngineRunInput } from './protocol.js'

/** The prelude's functions for one run: `start` (a new run's only) takes the program, `settle` and `takeCalls`. */
export interface RunApi {
  readonly start?: QuickJSHandle
  readonly settle: QuickJSHandle
  readonly takeCalls: QuickJSHandle
  /** A resumed run's program in progress (its promise). */
  readonly program?: QuickJSHandle
}

/** Runs `fn` inside the engine, its time counted (`RunClock.enter`). */
type Enter = <T>(fn: () => T) => T

/**
 * Calls the prelude's per-run function for a new run: its bindings, its sub-call caps (with `handOverEvery`,
 * see `QueueCaps`) and its output bound. Every handle made goes to `owned`: the run's long-lived handles are not
 * disposed, `reset()` frees them (a session run's are released before its capture).
 */
export function newRunApi(
  image: EngineImage,
  input: EngineRunInput,
  handOverEvery: number,
  enter: Enter,
  owned: QuickJSHandle[],
): RunApi {
  const { limits, bindings } = input
  const ctx = image.context
  const names = ctx.newString(JSON.stringify(bindings))
  const caps: QueueCaps = {
    maxSubCalls: limits.maxSubCalls,
    maxPendingSubCalls: limits.maxPendingSubCalls,
    handOverEvery,
  }
  const queue = ctx.newString(JSON.stringify(caps))
  const maxOutput = ctx.newNumber(limits.maxOutputBytes)
  owned.push(names, queue, maxOutput)
  const api = ctx.unwrapResult(
    enter(() => ctx.callFunction(image.prelude, ctx.undefined, image.host, names, queue, maxOutput)),
  )
  const start = ctx.getProp(api, 'start')
  const settle = ctx.getProp(api, 'settle')
  const takeCalls = ctx.getProp(api, 'takeCalls')
  owned.push(api, start, settle, takeCalls)
  return { start, settle, takeCalls }
}

/**
 * The api of the run in progress in a restored memory (the prelude's per-run function called without
 * bindings), or undefined when the memory holds none. Every handle made goes to `owned`.
 */
export function resumedRunApi(image: EngineImage, enter: Enter, owned: QuickJSHandle[]): RunApi | undefined {
  const ctx = image.context
  const api = ctx.unwrapResult(
    enter(() => ctx.callFunction(image.prelude, ctx.undefined, image.host, ctx.null, ctx.null)),
  )
  owned.push(api)
  if (ctx.typeof(api) !== 'object') return undefined
  const settle = ctx.getProp(api, 'settle')
  const takeCalls = ctx.getProp(api, 'takeCalls')
  const program = ctx.getProp(api, 'program')
  owned.push(settle, takeCalls, program)
  return { settle, takeCalls, program }
}
