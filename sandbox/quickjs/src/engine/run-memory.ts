import type { CodeRunError } from '@ptc/sandbox'
import type { EngineImage } from './image.js'
import type { EngineRunInput, EngineRunOutcome } from './protocol.js'
import type { SessionMemory } from './session-memory.js'
import { NOT_CAPTURED, overSuspendBudget } from '../messages.js'

/**
 * The memory a run starts on, or why it cannot start: `session`, it is its session's (its end may capture it
 * as the session's); `run`, it is this durable run's alone or its session's (a suspension may capture it).
 */
export type StartMemory = { readonly stop: CodeRunError } | { readonly session: boolean; readonly run: boolean }

/** Puts in place the memory a new run (not a resumed one) starts on: booted, or its session's. */
export function startMemory(image: EngineImage, input: EngineRunInput): StartMemory {
  const session = input.session
  if (input.durable !== undefined && session === undefined) {
    // Nothing above the booted state: a suspension captures this run's memory and no other's.
    const refused = image.restore(undefined)
    if (refused !== undefined) return { stop: { kind: 'crash', message: refused } }
  } else if (session === undefined) {
    if (image.resident !== undefined) image.reset()
  } else if (session.id === undefined || session.id !== image.resident) {
    const refused =
      session.id !== undefined && session.memory === undefined
        ? `the session's memory ${session.id} is not in this engine`
        : image.restore(session.memory)
    if (refused !== undefined) return { stop: refusal(refused) }
  }
  // From here the memory is the session's: only now may the run's end capture it as the session's (and
  // a durable session run's suspension, the session's state with the run's).
  return { session: session !== undefined, run: input.durable !== undefined }
}

/** Puts a suspended run's memory back in place (`resume.memory`). */
export function resumedMemory(
  image: EngineImage,
  input: EngineRunInput,
  resume: NonNullable<EngineRunInput['resume']>,
): StartMemory {
  const refused = image.restore(resume.memory)
  if (refused !== undefined) return { stop: refusal(refused) }
  // A session run's memory: its end captures it as the session's.
  return { session: input.session !== undefined, run: true }
}

/** The error of a memory `EngineImage.restore` refused: over the cap, or not this engine's. */
function refusal(message: string): CodeRunError {
  return { kind: /cap|allocated/.test(message) ? 'memory' : 'crash', message }
}

/**
 * How a suspending run ends, given its capture (`EngineImage.capture`; undefined when it failed, `stop` then
 * says why): suspended with its memory, or refused when the memory is over `maxBytes`.
 */
export function suspension(
  captured: SessionMemory | { over: number } | undefined,
  stop: CodeRunError | undefined,
  maxBytes: number,
  outputBytes: number,
): Pick<EngineRunOutcome, 'error' | 'suspended'> {
  if (captured !== undefined && 'over' in captured) {
    return { error: { kind: 'limit', message: overSuspendBudget(captured.over, maxBytes) } }
  }
  if (captured === undefined) return { error: stop ?? { kind: 'crash', message: NOT_CAPTURED } }
  return { suspended: { memory: captured, outputBytes } }
}
