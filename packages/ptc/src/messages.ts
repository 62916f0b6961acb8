/**
 * The sentences this package tells the model (a `run_code` value's text, a failed call's message, a program's
 * rejected tool call), in one place so they can be read together. The SDK guidance is in `guidance.ts`.
 */
import { textHead, type JsonValue } from '@ptc/tools'

/** `text`, or its first `max` characters and an ellipsis: what a message quotes of a text it does not bound. */
export function cut(text: string, max: number): string {
  return text.length <= max ? text : `${textHead(text, max)}…`
}

// --- The executor's guidance ---

/** What the SDK section adds with long runs on. */
export function longRunsGuidance(returnAfterMs: number): string {
  return (
    `A program still running after ${returnAfterMs} ms keeps running: run_code returns its output so far and a ` +
    'handle; call run_code with { wait: handle, description } for its next output, and its result once it ends.'
  )
}

// --- A run_code value's text ---

/** The line that ends a part of a program still running. */
export function stillRunning(handle: string): string {
  return (
    `(the program is still running: call run_code with { "wait": "${handle}", "description": "…" } ` +
    'for its next output and its result)'
  )
}

/**
 * The most characters of one awaited call's arguments the model reads again (the value keeps them whole, for
 * the person who decides): the program chose them, up to its memory.
 */
const AWAITED_ARGUMENTS_CHARS = 1024

/**
 * The most characters of awaited calls the model reads in all: a program may wait on up to
 * `maxPendingSubCalls` of them at once (256 by default), which would be a quarter of a million characters.
 */
const AWAITED_CALLS_CHARS = 16 * 1024

/** A call a suspended program waits on, as the model reads it (`AwaitingApproval.calls`). */
interface AwaitedCallText {
  readonly tool: string
  readonly arguments: JsonValue
  readonly reason?: string
}

/** The line that ends the part of a program that suspended awaiting approval. */
export function awaitingApproval(awaited: readonly AwaitedCallText[]): string {
  const calls: string[] = []
  let chars = 0
  for (const c of awaited) {
    if (chars >= AWAITED_CALLS_CHARS) {
      const more = awaited.length - calls.length
      calls.push(`and ${more} more call${more === 1 ? '' : 's'}`)
      break
    }
    const args = JSON.stringify(c.arguments)
    const shown =
      args.length <= AWAITED_ARGUMENTS_CHARS
        ? args
        : `${textHead(args, AWAITED_ARGUMENTS_CHARS)}… (${args.length} characters)`
    const call = `tools.${c.tool}(${shown})${c.reason === undefined ? '' : ` (${c.reason})`}`
    calls.push(call)
    chars += call.length
  }
  return (
    `(the program is waiting for approval of ${calls.join(', ')}; ` +
    'it continues where it waited once the user has decided — nothing to do until then)'
  )
}

// --- Durable approval ---

/** Why a suspended program's state was not stored, when the store gave no reason. */
export const NOT_STORED = 'it was not stored'

/** The reason kept when the store did not confirm a suspended program's state in time. */
export function storeDidNotAnswer(storeWaitMs: number): string {
  return `the store did not answer within ${storeWaitMs} ms`
}

/** The failure of a `run_code` call whose program suspended but could not be stored (`why`: bounded). */
export function suspendedStateLost(why: string): string {
  return `the program suspended awaiting approval, but its state could not be stored (${why}); it is lost`
}

/** A resumed program's call after its resume answered. */
export const RESUME_ENDED = 'the resume of this program has ended'

/** Why a resumed program is stopped before its first call: the store did not confirm it removed the state. */
export const STATE_NOT_REMOVED = 'the store did not confirm that it removed the state'

// --- A program's tool calls ---

/** What the calls a program's end stops are told by default (`SubCallScheduler.close`). */
export const PROGRAM_ENDED = 'the program ended'

/** What the calls of a hosted program's batch are told when the batch is aborted. */
export const BATCH_ABORTED = 'the batch was aborted'

/** What the calls still running when a program timed out are told. */
export const PROGRAM_TIMED_OUT = 'the program timed out'

/** A call a program makes after it ended. */
export const PROGRAM_HAS_ENDED = 'the program has ended'

/** A hosted program's call that arrives after its batch ended. */
export const BATCH_ENDED_FIRST = 'the batch ended before this call started'

/** A call of a name the program has no binding for. */
export function unknownTool(name: string): string {
  return `unknown tool: ${name}`
}

/** A bound call whose tool is no longer the one the program was given. */
export function toolGone(name: string): string {
  return `unknown tool: ${name} (it was removed, replaced or restricted after the program started)`
}

/** A queued call the program's end (`ending`) stopped before it started. */
export function notStarted(ending: string): string {
  return `${ending} before this call started`
}

/** A started call that had not settled when `ending` and the drain grace were over. */
export function abandonedAtEnd(ending: string): string {
  return `${ending} and the tool call was abandoned`
}

/** The note on the images and messages a program's calls returned that did not fit in `max` characters. */
export function leftOut(images: number, messages: number, max: number): string {
  const parts = [
    images > 0 && `${images} image${images === 1 ? '' : 's'}`,
    messages > 0 && `${messages} message${messages === 1 ? '' : 's'}`,
  ]
    .filter(Boolean)
    .join(' and ')
  return (
    `[ptc: ${parts} that the program's tool calls returned ${images + messages === 1 ? 'was' : 'were'} left out: ` +
    `they would have taken what a run_code result brings along past ${max} characters (maxForwardedChars)]`
  )
}

/** A hosted program's call whose `caller` is not `{ type, id, code? }`. */
export function malformedCaller(name: string): string {
  return (
    `the call of ${name} has a malformed caller: ` +
    'expected { type, id } (non-empty strings) and an optional code string'
  )
}
