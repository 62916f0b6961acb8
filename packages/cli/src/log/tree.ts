import type { SessionEvent } from '@ptc/tools'
import { contentBytes, elidedBytes } from '../demo/report.js'
import { isRecord } from '../records.js'

/** One settled (or unsettled) call in a session log. */
export interface LogCall {
  readonly id: string
  name: string
  arguments: unknown
  /** The arguments weighed this many bytes and the log kept only their head (`elided.arguments`). */
  argumentsElided: number | undefined
  /** Event times (ms since the epoch). */
  startedAt: number | undefined
  settledAt: number | undefined
  isError: boolean | undefined
  code: string | undefined
  /** The start of the result's text (at most `SUMMARY_CHARS`), for the summary. */
  resultText: string
  resultBytes: number
  /** The log kept only the head of the result's content (`elided.content`); `resultBytes` is what it weighed. */
  resultElided: boolean
  /** The harness stopped waiting for the call (its body ignored the abort): the result is the abandonment. */
  abandoned: boolean
  /** The abandoned body's own outcome, logged when it finally settled (`…-late` events). */
  late: { at: number; isError: boolean; code: string | undefined } | undefined
}

/**
 * A model-direct call (a `run_code` call or a native one) and the sub-calls of its program, or a program the
 * provider ran (`hosted`: its `tool/ptc-program` event; `arguments` is its code when the log has it).
 */
export interface LogRoot extends LogCall {
  description: string | undefined
  hosted: boolean
  turn: number | undefined
  step: number | undefined
  readonly subCalls: LogCall[]
  /** Its program suspended awaiting approval, or was resumed (`tool/ptc-suspend`, `tool/ptc-resume`), in log order. */
  readonly pauses: LogPause[]
}

/** A suspension or resumption of a program, after its first `at` sub-calls. */
export interface LogPause {
  readonly kind: 'suspend' | 'resume'
  readonly token: string
  readonly time: number
  /** How many of the root's sub-calls were logged before it. */
  readonly after: number
  /** Suspend: the calls it waits on (`name(args)`); resume: the decisions. */
  readonly detail: string[]
}

/** Enough of a result's text for any summary; the rest is not kept (a log may hold hundreds of MB of results). */
export const SUMMARY_CHARS = 4096

function textOf(content: unknown): string {
  if (!Array.isArray(content)) return ''
  let text = ''
  for (const [i, b] of (content as unknown[]).entries()) {
    if (text.length >= SUMMARY_CHARS) break
    const piece =
      isRecord(b) && b.type === 'text' && typeof b.text === 'string'
        ? b.text.slice(0, SUMMARY_CHARS)
        : isRecord(b) && b.type === 'image'
          ? '[image]'
          : ''
    text += i === 0 ? piece : `\n${piece}`
  }
  return text.slice(0, SUMMARY_CHARS)
}

function errorCode(event: SessionEvent): string | undefined {
  const error = isRecord(event.error) ? event.error : undefined
  const info = isRecord(error?.info) ? error.info : undefined
  return typeof info?.code === 'string' ? info.code : undefined
}

/** `run_code`'s `description`, from the call's JSON arguments text. */
function descriptionOf(name: string, args: unknown): string | undefined {
  if (name !== 'run_code' || typeof args !== 'string') return undefined
  try {
    const parsed: unknown = JSON.parse(args)
    return isRecord(parsed) && typeof parsed.description === 'string' ? parsed.description : undefined
  } catch {
    return undefined
  }
}

function settle(call: LogCall, event: SessionEvent): void {
  call.settledAt = event.time
  call.isError = event.isError === true
  call.code = errorCode(event)
  call.resultText = textOf(event.content)
  call.resultBytes = elidedBytes(event, 'content') ?? contentBytes(event.content)
  call.resultElided = elidedBytes(event, 'content') !== undefined
  call.abandoned = event.abandoned === true
}

function settleLate(call: LogCall | undefined, event: SessionEvent): void {
  if (call !== undefined) call.late = { at: event.time, isError: event.isError === true, code: errorCode(event) }
}

function newCall(id: string, name: string, args: unknown, startedAt: number | undefined): LogCall {
  return {
    id,
    name,
    arguments: args,
    argumentsElided: undefined,
    resultElided: false,
    startedAt,
    settledAt: undefined,
    isError: undefined,
    code: undefined,
    resultText: '',
    resultBytes: 0,
    abandoned: false,
    late: undefined,
  }
}

/**
 * Groups a session's events into calls (in log order) with their sub-calls
 * nested under them. A call id seen again after its call was logged (two
 * harness runs appending to one file) starts a new call.
 */
export function buildLogTree(events: readonly SessionEvent[]): LogRoot[] {
  const roots: LogRoot[] = []
  const current = new Map<string, LogRoot>()
  const subCalls = new Map<string, LogCall>()
  const open = (id: string, event: SessionEvent, name: string): LogRoot => {
    const created: LogRoot = {
      ...newCall(id, name, undefined, undefined),
      description: undefined,
      hosted: false,
      turn: event.turn,
      step: event.step,
      subCalls: [],
      pauses: [],
    }
    roots.push(created)
    current.set(id, created)
    return created
  }
  /** The root a start event describes: the one its settle or sub-calls already opened, else a new one. */
  const started = (id: string, event: SessionEvent, name: string): LogRoot => {
    const existing = current.get(id)
    return existing === undefined || existing.startedAt !== undefined ? open(id, event, name) : existing
  }
  const root = (id: string, event: SessionEvent): LogRoot =>
    current.get(id) ??
    open(id, event, typeof event.name === 'string' && event.type === 'tool/result' ? event.name : 'run_code')
  for (const event of events) {
    if (event.type === 'tool/call' && typeof event.callId === 'string') {
      const name = typeof event.name === 'string' ? event.name : '?'
      Object.assign(started(event.callId, event, name), {
        name,
        arguments: event.arguments,
        description: descriptionOf(name, event.arguments),
        startedAt: event.time,
        turn: event.turn,
        step: event.step,
      })
    } else if (event.type === 'tool/ptc-program' && typeof event.callId === 'string') {
      Object.assign(started(event.callId, event, String(event.name)), {
        name: String(event.name),
        arguments: typeof event.code === 'string' ? event.code : undefined,
        hosted: true,
        startedAt: event.time,
        turn: event.turn,
        step: event.step,
      })
    } else if (event.type === 'tool/result' && typeof event.callId === 'string') {
      settle(root(event.callId, event), event)
    } else if (
      event.type === 'tool/ptc-dispatch-start' &&
      typeof event.subCallId === 'string' &&
      typeof event.parentCallId === 'string'
    ) {
      const call = newCall(event.subCallId, String(event.name), event.arguments, event.time)
      call.argumentsElided = elidedBytes(event, 'arguments')
      subCalls.set(event.subCallId, call)
      root(event.parentCallId, event).subCalls.push(call)
    } else if (event.type === 'tool/ptc-dispatch' && typeof event.subCallId === 'string') {
      const call = subCalls.get(event.subCallId)
      if (call !== undefined) settle(call, event)
    } else if (event.type === 'tool/ptc-dispatch-late' && typeof event.subCallId === 'string') {
      settleLate(subCalls.get(event.subCallId), event)
    } else if (
      (event.type === 'tool/ptc-suspend' || event.type === 'tool/ptc-resume') &&
      typeof event.parentCallId === 'string' &&
      typeof event.token === 'string'
    ) {
      const parent = root(event.parentCallId, event)
      const suspend = event.type === 'tool/ptc-suspend'
      const detail = suspend
        ? (Array.isArray(event.awaiting) ? event.awaiting : []).map((a) =>
            isRecord(a)
              ? `${String(a.name)}(${jsonText(a.arguments ?? null)})${typeof a.reason === 'string' ? ` (${a.reason})` : ''}`
              : '?',
          )
        : (Array.isArray(event.decisions) ? event.decisions : []).map(String)
      parent.pauses.push({
        kind: suspend ? 'suspend' : 'resume',
        token: event.token,
        time: event.time,
        after: parent.subCalls.length,
        detail,
      })
    } else if (event.type === 'tool/result-late' && typeof event.callId === 'string') {
      settleLate(current.get(event.callId), event)
    }
  }
  return roots
}

/** What the views of a log show for a value nested too deeply to print. */
export const TOO_DEEP = '(nested too deeply to show)'

/**
 * `value` as JSON text; one nested too deeply for `JSON.stringify` (it recurses: a RangeError past a few thousand
 * levels) is `unshown`.
 */
export function jsonText(value: unknown, unshown = TOO_DEEP): string {
  try {
    return JSON.stringify(value) ?? ''
  } catch {
    return unshown
  }
}
