/**
 * Every sentence of the QuickJS backend that reaches a model's text (a run's error, a session's note), kept together
 * so that they can be read side by side. Errors thrown at the host (bad options, misuse) stay where they are thrown.
 */

// A run's error (`CodeRunError.message`).

export function engineFailed(why: string): string {
  return `the QuickJS engine failed: ${why}`
}

export function loadFailed(error: unknown): string {
  return `QuickJS failed to load: ${String(error)}`
}

/** `message`: the engine's own RangeError message. */
export function nativeStackOverflow(message: string): string {
  return (
    `RangeError: ${message}: the program nests or recurses too deeply for the engine's native stack ` +
    '(this cannot be caught inside the program)'
  )
}

/** A thrown value whose error text the host could not read. */
export const UNREADABLE_ERROR = 'unreadable error'

export const NO_PROGRAM_IN_MEMORY = 'the suspended run has no program in progress in its memory'

export const NOT_CAPTURED = 'the suspended run could not be captured'

export function overSuspendBudget(bytes: number, maxBytes: number): string {
  return (
    `the program waits on a parked call with ${bytes} bytes of state, over the ${maxBytes}-byte ` +
    'budget of a suspended run (maxSessionBytes): it cannot suspend'
  )
}

/** `why`: why the session was not ready in time. */
export function wallBeforeStart(wallMs: number, why: string): string {
  return `wall-clock limit of ${wallMs} ms exceeded before the program started (${why})`
}

export function wallBeforeResume(why: string): string {
  return `the run's wall-clock limit was reached before it went on (${why})`
}

// A session's note (`CodeRunSessionInfo.note`).

export const HOST_FAILED = 'the run failed on the host; the session keeps its state from before the run'

export const RESUME_HOST_FAILED = 'the resumed run failed on the host; the session keeps its state from before the run'

/** A resumed run whose session went on without it (its hold ended). */
export const SESSION_NOT_TAKEN = 'the session was not taken'

export function overSessionBudget(bytes: number, maxBytes: number): string {
  return (
    `the run left ${bytes} bytes of state, over the session's budget of ${maxBytes} ` +
    '(maxSessionBytes); the session keeps its state from before the run'
  )
}

/** `kind`: how the run ended (`ok`, or its error's kind). */
export function noEngineState(kind: string): string {
  return `the run ended (${kind}) without its engine's state; the session keeps its state from before the run`
}
