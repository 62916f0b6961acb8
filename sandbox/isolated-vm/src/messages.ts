/**
 * Every sentence of the isolated-vm backend that reaches a model's text (a run's error, a session's note), kept
 * together so that they can be read side by side. Errors thrown at the host (bad options, misuse) stay where they are
 * thrown.
 */

// A run's error (`CodeRunError.message`).

export const MALFORMED_SUB_CALL = 'the guest sent a malformed sub-call'

export const MALFORMED_COMPLETION = 'the guest sent a malformed completion'

/** A thrown value whose error text the host could not read. */
export const UNREADABLE_ERROR = 'unreadable error'

/** Added to the wall-clock limit's message of a run that never got an engine. */
export const NO_ENGINE_READY = ' before the program started (no isolated-vm engine process was ready)'

export function lostControl(message: string): string {
  return `isolated-vm lost control of the isolate: ${message}`
}

export function noIsolate(why: string): string {
  return `could not create an isolate: ${why}`
}

export function isolateDied(why: string): string {
  return `the isolate died: ${why}`
}

/** `why`: one of the reasons below; `tail`: the last lines the engine process wrote to stderr, if any. */
export function engineDied(why: string, tail: string): string {
  return `the isolated-vm engine process hosting this run died (${why})${tail !== '' ? `: ${tail}` : ''}`
}

// Why an engine process went (in `engineDied`, and in a session's note through `engineGone`).

export const DISPOSED = 'the runtime was disposed'

export const STOPPED_READING = 'the engine process stopped reading'

export function killed(reason: string): string {
  return `it was killed: ${reason}`
}

/** `how`: `signal SIGKILL`, `exit code 1`. */
export function exited(how: string): string {
  return `it ended with ${how}`
}

export function notStopped(graceMs: number): string {
  return `a run in it did not stop within ${graceMs} ms of its answer`
}

export function unreadableMessage(why: string): string {
  return `it sent a message the host cannot read (${why})`
}

export function lostAnIsolate(message: string): string {
  return `isolated-vm lost control of an isolate in it (${message})`
}

// A session's note (`CodeRunSessionInfo.note`).

export function engineGone(why: string): string {
  return `the isolated-vm engine process hosting it died (${why})`
}

export function isolateLost(why: string): string {
  return `its isolate is lost: ${why}`
}

export function inlineNotStopped(graceMs: number): string {
  return `it did not stop within ${graceMs} ms of the run's answer`
}

/** `kind`: the run's error kind, or `ok`. */
export function endedWhileRunning(kind: string): string {
  return `the run ended as ${kind} while the program ran, which disposes the session's isolate`
}

export const JOBS_STILL_RAN =
  'jobs the program left still ran in its isolate after it ended, so the isolate was disposed'

export function endedBeforeStart(kind: string): string {
  return `the run ended as ${kind} before it started`
}

export function stateDropped(why: string): string {
  return `the session's earlier state was dropped: ${why}`
}

export const ISOLATE_WAS_GONE = 'its isolate was gone'

export function keepsState(why: string): string {
  return `${why}; the session keeps its state from before the run`
}

export function stateLost(why: string): string {
  return `${why}: the session's state is lost`
}

export function overSessionBudget(bytes: number, max: number): string {
  return (
    `the run left ${bytes} bytes of heap in the session's isolate, over the session's budget of ${max} ` +
    `(maxSessionBytes): the isolate was disposed and the session's state is lost`
  )
}

export function keeperGone(gone: string | undefined): string {
  return `the isolated-vm engine that kept its isolate is gone (${gone ?? 'it died'})`
}
