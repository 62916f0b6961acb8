import { escapeControl } from '../escape.js'
import { formatBytes, formatMs, oneLine } from '../format.js'
import { jsonText, TOO_DEEP, type LogCall, type LogRoot } from './tree.js'

const ms = (call: LogCall): number | undefined =>
  call.startedAt === undefined || call.settledAt === undefined ? undefined : call.settledAt - call.startedAt

function outcome(call: LogCall): string {
  if (call.settledAt === undefined) return 'no result logged'
  const summary = oneLine(call.resultText, 70)
  const head = call.isError === true ? `error ${call.code ?? ''}`.trimEnd() : 'ok'
  const abandoned = call.abandoned ? ` — abandoned; ${lateOutcome(call)}` : ''
  const size = `${formatBytes(call.resultBytes)}${call.resultElided ? ', not logged whole' : ''}`
  return `${head} (${size})${summary === '' ? '' : `: ${summary}`}${abandoned}`
}

/** What became of an abandoned call's body. */
function lateOutcome(call: LogCall): string {
  const late = call.late
  if (late === undefined) return 'its body never settled in this log'
  const after = call.startedAt === undefined ? '' : ` after ${formatMs(late.at - call.startedAt)}`
  return `its body settled later${after}: ${late.isError ? `error ${late.code ?? ''}`.trimEnd() : 'ok'}`
}

/** A short, readable form of a call's arguments: JSON text for the model's calls, a value for sub-calls. */
export function argumentsSummary(args: unknown, max = 60): string {
  if (args === undefined) return ''
  return oneLine(typeof args === 'string' ? args : jsonText(args, '(arguments nested too deeply to show)'), max)
}

/** How deep `--json` prints a value of the log: `JSON.stringify` recurses, and a few thousand levels overflow it. */
const MAX_JSON_DEPTH = 1000

/** `value` (parsed JSON) with what lies deeper than `MAX_JSON_DEPTH` levels replaced by `TOO_DEEP`. */
function shallow(value: unknown, depth: number): unknown {
  if (typeof value !== 'object' || value === null) return value
  if (depth >= MAX_JSON_DEPTH) return TOO_DEEP
  if (Array.isArray(value)) return value.map((item) => shallow(item, depth + 1))
  return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, shallow(item, depth + 1)]))
}

/**
 * The log as an indented tree: each call with its description, duration and
 * outcome, its sub-calls under it. Every line is escaped (`escapeControl`):
 * names, ids and texts from the log cannot start a line of their own.
 */
export function renderLogTree(roots: readonly LogRoot[]): string[] {
  const lines: string[] = []
  const push = (line: string): void => void lines.push(escapeControl(line))
  for (const root of roots) {
    const where =
      root.turn === undefined ? '' : ` [turn ${root.turn}${root.step === undefined ? '' : `, step ${root.step}`}]`
    const label =
      root.description !== undefined ? `"${oneLine(root.description, 80)}"` : argumentsSummary(root.arguments)
    if (root.hosted) push(`${root.name} ${root.id}${where} ${label} — a program the provider ran`)
    else push(`${root.name} ${root.id}${where} ${label} — ${formatMs(ms(root))} — ${outcome(root)}`)
    const pausesAfter = (n: number): void => {
      for (const p of root.pauses) {
        if (p.after !== n) continue
        push(
          p.kind === 'suspend'
            ? `  ‖ suspended awaiting approval of ${p.detail.map((d) => oneLine(d, 60)).join(', ')} — token ${p.token}`
            : `  ‖ resumed (${p.detail.join(', ')}) — token ${p.token}`,
        )
      }
    }
    pausesAfter(0)
    root.subCalls.forEach((call, i) => {
      const branch = i === root.subCalls.length - 1 ? '└─' : '├─'
      const elided =
        call.argumentsElided === undefined ? '' : ` [arguments ${formatBytes(call.argumentsElided)}, not logged whole]`
      push(
        `  ${branch} ${call.id} ${call.name}(${argumentsSummary(call.arguments)})${elided} — ${formatMs(ms(call))} ` +
          `— ${outcome(call)}`,
      )
      pausesAfter(i + 1)
    })
    if (root.hosted) {
      const bytes = root.subCalls.reduce((sum, c) => sum + c.resultBytes, 0)
      push(
        `     ${root.subCalls.length} call(s) from the provider's program; ${formatBytes(bytes)} of tool results ` +
          `went to it`,
      )
    } else if (root.subCalls.length > 0) {
      const bytes = root.subCalls.reduce((sum, c) => sum + c.resultBytes, 0)
      push(
        `     ${root.subCalls.length} sub-call(s); ${formatBytes(bytes)} of tool results stayed in the sandbox, ` +
          `${formatBytes(root.resultBytes)} reached the model`,
      )
    }
  }
  return lines
}

/** `ptc log --json`: the same tree as data. */
export function logTreeJson(roots: readonly LogRoot[]): unknown[] {
  const call = (c: LogCall) => ({
    id: c.id,
    name: c.name,
    arguments: c.arguments === undefined ? null : shallow(c.arguments, 0),
    ms: ms(c) ?? null,
    settled: c.settledAt !== undefined,
    isError: c.isError ?? null,
    code: c.code ?? null,
    bytes: c.resultBytes,
    summary: oneLine(c.resultText, 200),
    abandoned: c.abandoned,
    argumentsElided: c.argumentsElided ?? null,
    resultElided: c.resultElided,
    late:
      c.late === undefined
        ? null
        : {
            ms: c.startedAt === undefined ? null : c.late.at - c.startedAt,
            isError: c.late.isError,
            code: c.late.code ?? null,
          },
  })
  return roots.map((r) => ({
    ...call(r),
    description: r.description ?? null,
    hosted: r.hosted,
    turn: r.turn ?? null,
    step: r.step ?? null,
    subCalls: r.subCalls.map(call),
    pauses: r.pauses.map((p) => ({ kind: p.kind, token: p.token, after: p.after, detail: p.detail })),
  }))
}
