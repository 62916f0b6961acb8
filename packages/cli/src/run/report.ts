import type { CodeRunResult } from '@ptc/sandbox'
import type { JsonValue, SessionEvent, ToolExecutionResult } from '@ptc/tools'
import { byteFigures, contentText, nativeComparison, subCallsOf, type SubCallRecord } from '../demo/report.js'
import { styled, type StyledLine } from '../colour.js'
import { escapeControl } from '../escape.js'
import { formatBytes, oneLine } from '../format.js'

/** `ptc run --json`: one object, the run as the model and the host saw it. */
export interface RunReport {
  readonly ok: boolean
  /** What the model receives. */
  readonly text: string
  /** The program's return value (`null` when it returned nothing or failed). */
  readonly value: JsonValue
  readonly logs: readonly string[]
  readonly error: { readonly kind: string; readonly message: string } | null
  readonly subCalls: readonly { id: string; name: string; isError: boolean; ms: number | null; bytes: number }[]
  /** Tool result bytes that stayed in the sandbox, and bytes of the text the model reads. */
  readonly bytes: { readonly inSandbox: number; readonly toModel: number }
  readonly sandbox: string
  readonly wallMs: number
}

export interface RunFacts {
  readonly callId: string
  readonly result: ToolExecutionResult
  readonly run: CodeRunResult | undefined
  readonly events: readonly SessionEvent[]
  readonly sandbox: string
  readonly wallMs: number
}

export function runReport(facts: RunFacts): { report: RunReport; subCalls: SubCallRecord[] } {
  const { result, run } = facts
  const subCalls = subCallsOf(facts.events, facts.callId)
  const error = !result.isError
    ? null
    : run?.error !== undefined
      ? { kind: run.error.kind, message: run.error.message }
      : { kind: result.error.info?.code ?? 'error', message: result.error.message }
  const report: RunReport = {
    ok: !result.isError,
    text: contentText(result.content),
    value: run?.error === undefined ? (run?.value ?? null) : null,
    logs: run?.logs ?? [],
    error,
    subCalls: subCalls.map((c) => ({
      id: c.subCallId,
      name: c.name,
      isError: c.isError,
      ms: c.settledAt === undefined ? null : c.settledAt - c.startedAt,
      bytes: c.contentBytes,
    })),
    bytes: byteFigures(subCalls, result.content),
    sandbox: facts.sandbox,
    wallMs: Math.round(facts.wallMs),
  }
  return { report, subCalls }
}

/**
 * The byte figures in words. The model's text is not a part of the tool results but the program's own
 * output (its logs and value, JSON indented for reading; on failure the error message and the logs), so it
 * can be larger than what the tools returned: a share is shown only up to 100%, and past it the difference
 * is said in bytes, with why.
 */
export function byteSummary(report: Pick<RunReport, 'bytes' | 'error'>, subCalls: number): string {
  const { inSandbox, toModel } = report.bytes
  const figures =
    `bytes of tool results that stayed in the sandbox: ${inSandbox}; bytes that reached the model: ` + `${toModel}`
  if (toModel <= inSandbox)
    return inSandbox === 0
      ? figures
      : `${figures} (${Math.round((100 * toModel) / inSandbox)}% of what the tools returned)`
  const own =
    report.error !== null
      ? 'the error message and the logs captured before it'
      : 'what the program logged and returned (a value as indented JSON)'
  if (subCalls === 0) return `${figures} (no tool was called: all of it is ${own})`
  return (
    `${figures} (${toModel - inSandbox} more than the tools returned: the model reads ${own}, the program's ` +
    `own text, not a share of the tool results)`
  )
}

/**
 * The human footer (stderr): each sub-call with its outcome in colour, then how
 * many bytes stayed in the sandbox. `suspended`: the program suspended (a deferred call waits for approval). Every span
 * is escaped when rendered (`renderLine`): names, codes and messages from tools and the program cannot start a line of
 * their own.
 */
export function formatFooter(report: RunReport, subCalls: readonly SubCallRecord[], suspended = false): StyledLine[] {
  const lines: StyledLine[] = [
    [
      `ptc: ${subCalls.length} sub-call${subCalls.length === 1 ? '' : 's'} (${report.sandbox}, run ${report.wallMs} ms)`,
    ],
  ]
  const rows = subCalls.map((c) => ({ call: c, id: escapeControl(c.subCallId), name: escapeControl(c.name) }))
  const idWidth = Math.max(0, ...rows.map((r) => r.id.length))
  const nameWidth = Math.max(0, ...rows.map((r) => r.name.length))
  for (const { call: c, id, name } of rows) {
    const ms = c.settledAt === undefined ? '?' : `${c.settledAt - c.startedAt} ms`
    const outcome =
      c.settledAt === undefined
        ? styled('yellow', 'never settled')
        : c.code === 'APPROVAL_DEFERRED'
          ? suspended
            ? styled('yellow', 'waits for approval (the program suspended here)')
            : styled('red', 'deferred, but the program ended before it could suspend: the call did not run')
          : c.isError
            ? styled('red', `error ${c.code ?? ''}: ${oneLine(c.errorMessage ?? '', 80)}`)
            : styled('green', 'ok')
    lines.push([
      `  ${id.padEnd(idWidth)}  ${name.padEnd(nameWidth)}  ${ms.padStart(7)}  ` +
        `${formatBytes(c.contentBytes).padStart(8)}  `,
      outcome,
    ])
  }
  lines.push([`ptc: ${byteSummary(report, subCalls.length)}`])
  // A failed run's text is its error: no measure of what PTC saved.
  const comparison = report.error === null ? nativeComparison(subCalls.length, report.bytes) : undefined
  if (comparison !== undefined) lines.push([`ptc: ${comparison}`])
  if (report.error !== null)
    lines.push([styled('red', `ptc: the program failed (${report.error.kind}): ${oneLine(report.error.message, 200)}`)])
  return lines
}
