/**
 * Reading a run back from its session log: the sub-calls of each `run_code`
 * call (start + settle pairs) and how many result bytes stayed in the sandbox.
 */
import type { ContentBlock, SessionEvent } from '@ptc/tools'
import { isRecord } from '../records.js'

/** One sub-call of a run, paired from `tool/ptc-dispatch-start` and `tool/ptc-dispatch`. */
export interface SubCallRecord {
  readonly subCallId: string
  readonly parentCallId: string
  readonly name: string
  readonly arguments: unknown
  readonly startedAt: number
  /** `undefined` when the log has a start without a settle (which the contract forbids). */
  readonly settledAt: number | undefined
  readonly isError: boolean
  readonly code: string | undefined
  readonly errorMessage: string | undefined
  /** UTF-8 bytes of the logged content's text blocks. */
  readonly contentBytes: number
}

/** UTF-8 bytes of the text blocks in `content` (images are counted by their base64 length). */
export function contentBytes(content: unknown): number {
  if (!Array.isArray(content)) return 0
  let bytes = 0
  for (const block of content as unknown[]) {
    if (!isRecord(block)) continue
    if (block.type === 'text' && typeof block.text === 'string') bytes += Buffer.byteLength(block.text, 'utf8')
    else if (block.type === 'image' && typeof block.data === 'string') bytes += block.data.length
  }
  return bytes
}

/**
 * What an event's value weighed when the log did not keep it whole (`elided.arguments` or `elided.content`: a run
 * past its `logLimits`), else `undefined`.
 */
export function elidedBytes(event: SessionEvent, value: 'arguments' | 'content'): number | undefined {
  const elided = isRecord(event.elided) ? event.elided[value] : undefined
  return isRecord(elided) && typeof elided.bytes === 'number' ? elided.bytes : undefined
}

/** The text of model-facing content. */
export function contentText(content: readonly ContentBlock[]): string {
  return content.map((b) => (b.type === 'text' ? b.text : `[${b.mimeType} image]`)).join('\n')
}

/** Sub-calls in start order, optionally only those of one `run_code` call. */
export function subCallsOf(events: readonly SessionEvent[], parentCallId?: string): SubCallRecord[] {
  const records = new Map<string, SubCallRecord>()
  for (const event of events) {
    if (typeof event.subCallId !== 'string' || typeof event.parentCallId !== 'string') continue
    if (parentCallId !== undefined && event.parentCallId !== parentCallId) continue
    if (event.type === 'tool/ptc-dispatch-start') {
      records.set(event.subCallId, {
        subCallId: event.subCallId,
        parentCallId: event.parentCallId,
        name: String(event.name),
        arguments: event.arguments,
        startedAt: event.time,
        settledAt: undefined,
        isError: false,
        code: undefined,
        errorMessage: undefined,
        contentBytes: 0,
      })
    } else if (event.type === 'tool/ptc-dispatch') {
      const started = records.get(event.subCallId)
      if (started === undefined) continue
      const error = isRecord(event.error) ? event.error : undefined
      const info = isRecord(error?.info) ? error.info : undefined
      records.set(event.subCallId, {
        ...started,
        settledAt: event.time,
        isError: event.isError === true,
        code: typeof info?.code === 'string' ? info.code : undefined,
        errorMessage: typeof error?.message === 'string' ? error.message : undefined,
        contentBytes: elidedBytes(event, 'content') ?? contentBytes(event.content),
      })
    }
  }
  return [...records.values()]
}

/** Bytes of sub-call results that stayed in the sandbox vs. bytes of the `run_code` result the model read. */
export interface ByteFigures {
  readonly inSandbox: number
  readonly toModel: number
}

export function byteFigures(subCalls: readonly SubCallRecord[], modelContent: readonly ContentBlock[]): ByteFigures {
  return { inSandbox: subCalls.reduce((sum, c) => sum + c.contentBytes, 0), toModel: contentBytes(modelContent) }
}

/**
 * What makes PTC worth it, in one sentence: native tool calling sends every call and its result through the
 * model; PTC sends one `run_code` call and what the program printed or returned. Undefined without sub-calls.
 */
export function nativeComparison(subCalls: number, bytes: ByteFigures): string | undefined {
  if (subCalls === 0) return undefined
  const calls = `${subCalls} call${subCalls === 1 ? '' : 's'}`
  return (
    `native tool calling would have sent ${calls} and ${bytes.inSandbox} bytes of tool results to the model; ` +
    `PTC sent 1 call (run_code) and ${bytes.toModel} bytes`
  )
}
