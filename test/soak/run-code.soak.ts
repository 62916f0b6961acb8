/**
 * The soak of issue 10: sequential then concurrent `run_code` calls through a real host (ToolsService
 * + PTC executor + a backend) with one program in ten hostile (a busy loop, a memory bomb, an output
 * flood, an exception, a tool that never settles and ignores its signal), logged to a JsonlSession in
 * a temp folder. It reports what the tests and `long.ts` judge: benign failures, hostile outcomes,
 * calls that never returned, RSS and heap at the reference call and at the end, and whether every
 * `tool/ptc-dispatch-start` in the file has exactly one `tool/ptc-dispatch`. No assertions here: the
 * long script runs without vitest.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import { createPtcExecutor } from '@ptc/ptc'
import type { CodeRuntime } from '@ptc/sandbox'
import { defineTool, ToolsService, type Agent, type ToolExecutionResult } from '@ptc/tools'
import { JsonlSession } from '@ptc/tools/session'
import { treeRssBytes } from '../security/proc.js'

setFlagsFromString('--expose-gc')
const gc = runInNewContext('gc') as () => void

export const MiB = 1024 * 1024

export interface SoakCounts {
  readonly sequential: number
  readonly concurrent: number
}

/** The full soak of the issue. */
export const FULL_SOAK: SoakCounts = { sequential: 2000, concurrent: 200 }

/**
 * Counts from `PTC_SOAK_SCALE`: unset, the short CI form (300 + 50); `full` or `1`, the issue's
 * 2 000 + 200; another number, that fraction (or multiple) of the full form.
 */
export function soakCounts(scale = process.env.PTC_SOAK_SCALE): SoakCounts {
  if (scale === undefined || scale === '') return { sequential: 300, concurrent: 50 }
  const factor = scale === 'full' ? 1 : Number(scale)
  if (!Number.isFinite(factor) || factor <= 0)
    throw new Error(`PTC_SOAK_SCALE must be "full" or a positive number, not ${scale}`)
  return {
    sequential: Math.max(10, Math.round(FULL_SOAK.sequential * factor)),
    concurrent: Math.max(10, Math.round(FULL_SOAK.concurrent * factor)),
  }
}

export interface MemoryPoint {
  /** Calls finished when measured. */
  readonly calls: number
  /** RSS of this process and its child processes (isolated-vm's engine processes live there). */
  readonly rss: number
  /** RSS of this process alone. */
  readonly hostRss: number
  readonly heapUsed: number
}

export interface SoakReport {
  readonly counts: SoakCounts
  readonly benign: number
  readonly hostile: number
  /** Benign runs that did not give exactly their value. */
  readonly benignFailures: readonly string[]
  /** Hostile runs that ended otherwise than their kind says. */
  readonly hostileMismatches: readonly string[]
  /** `run_code` calls that had not returned 15 s past their wall. */
  readonly hung: readonly string[]
  /** After call `reference` (the 1000th in the full form, half the sequential calls in short forms). */
  readonly reference: MemoryPoint
  /** After the sequential calls, before the concurrent ones. */
  readonly afterSequential: MemoryPoint
  readonly end: MemoryPoint
  readonly sequentialMs: number
  readonly concurrentMs: number
  readonly log: SessionCheck
}

export interface SessionCheck {
  readonly lines: number
  readonly invalidLines: number
  readonly starts: number
  readonly settles: number
  /** Starts with no settle, or with more than one (subCallId: count). */
  readonly unmatched: readonly string[]
  /** Settles whose subCallId never started. */
  readonly orphans: readonly string[]
  /** Benign sub-calls (two per benign run) missing a start. */
  readonly missingStarts: readonly string[]
  readonly types: Readonly<Record<string, number>>
}

interface Program {
  readonly code: string
  readonly timeoutMs?: number
  /** `ok:<json of the canonical value>` or the failure kind. */
  readonly expect: string
  readonly benign: boolean
}

/** Call `i`'s program: one in ten is hostile, cycling through five kinds (the never-settling tool two ways). */
export function programFor(i: number): Program {
  switch (i % 50) {
    case 5:
      return { code: 'while (true) {}', timeoutMs: 200, expect: 'timeout', benign: false }
    case 15:
      return { code: 'const a = []\nwhile (true) a.push([1, 2, 3, 4, 5, 6, 7, 8])', expect: 'memory', benign: false }
    case 25:
      return { code: 'while (true) console.log("flood")', expect: 'output-limit', benign: false }
    case 35:
      return { code: 'throw new Error("boom")', expect: 'exception', benign: false }
    case 45:
      return Math.floor(i / 50) % 2 === 0
        ? { code: 'await tools.hang({})\nreturn "not reached"', timeoutMs: 300, expect: 'timeout', benign: false }
        : {
            // Results commit in submission order, so the echo goes first; the hang call starts as soon as the
            // echo's policy settled, before its body answers: the hang call is in flight at the return.
            code: 'const e = tools.echo({ k: 0 })\ntools.hang({}).catch(() => {})\nawait e\nreturn "left"',
            expect: `ok:${JSON.stringify({ logs: [], result: 'left' })}`,
            benign: false,
          }
    default:
      return {
        code: `const rs = await Promise.all([tools.echo({ k: 1 }), tools.echo({ k: ${i} })])\nconsole.log('run', ${i})\nreturn rs.map((r) => r.k)`,
        expect: `ok:${JSON.stringify({ logs: [`run ${i}`], result: [1, i] })}`,
        benign: true,
      }
  }
}

function outcomeOf(result: ToolExecutionResult): string {
  if (!result.isError) return `ok:${JSON.stringify(result.value)}`
  return /code run failed \(([\w-]+)\)/.exec(result.error.message)?.[1] ?? `error:${result.error.message.slice(0, 200)}`
}

/**
 * Memory after settling: a forced GC, then the lowest of five samples over a second (a memory bomb a
 * few calls earlier leaves its engine's pages resident for a moment; a leak stays in every sample).
 */
async function memory(calls: number): Promise<MemoryPoint> {
  let best: MemoryPoint | undefined
  for (let i = 0; i < 5; i++) {
    gc()
    await new Promise((resolve) => setTimeout(resolve, 200))
    const m = process.memoryUsage()
    const tree = treeRssBytes()
    const point = { calls, rss: tree === 0 ? m.rss : tree, hostRss: m.rss, heapUsed: m.heapUsed }
    if (best === undefined || point.rss < best.rss) best = point
  }
  return best as MemoryPoint
}

/** The tools: a concurrency-safe echo that awaits a microtask, and a tool that never settles and ignores its signal. */
function soakTools(hanging: (() => void)[]): ReturnType<typeof defineTool>[] {
  const echo = defineTool({
    name: 'echo',
    description: 'Echo k.',
    parameters: { k: { type: 'integer', required: true } },
    output: {
      schema: { type: 'object', additionalProperties: false, properties: { k: { type: 'integer' } } },
      render: (_a, v) => [{ type: 'text', text: String(v.k) }],
    },
    isConcurrencySafe: () => true,
    execute: async ({ k }) => {
      await null
      return { k }
    },
  })
  const hang = defineTool({
    name: 'hang',
    description: 'Never settles (until the soak ends) and ignores its signal.',
    parameters: {},
    output: { schema: { type: 'null' }, render: () => [{ type: 'text', text: 'late' }] },
    isConcurrencySafe: () => true,
    execute: () => new Promise<null>((resolve) => hanging.push(() => resolve(null))),
  })
  return [echo, hang]
}

/** Reads the session file back: every line must parse; every start has exactly one settle. */
export function checkSession(path: string, benignRuns: readonly string[]): SessionCheck {
  const lines = readFileSync(path, 'utf8')
    .split('\n')
    .filter((l) => l !== '')
  let invalidLines = 0
  const types: Record<string, number> = {}
  const starts = new Map<string, number>()
  const settles = new Map<string, number>()
  for (const line of lines) {
    let event: { type?: unknown; subCallId?: unknown }
    try {
      event = JSON.parse(line) as typeof event
    } catch {
      invalidLines++
      continue
    }
    const type = String(event.type)
    types[type] = (types[type] ?? 0) + 1
    const id = String(event.subCallId)
    if (type === 'tool/ptc-dispatch-start') starts.set(id, (starts.get(id) ?? 0) + 1)
    if (type === 'tool/ptc-dispatch') settles.set(id, (settles.get(id) ?? 0) + 1)
  }
  const unmatched = [...starts]
    .filter(([id, n]) => n !== 1 || settles.get(id) !== 1)
    .map(([id]) => `${id}: ${starts.get(id)} starts, ${settles.get(id) ?? 0} settles`)
  const orphans = [...settles.keys()].filter((id) => !starts.has(id))
  const missingStarts = benignRuns.flatMap((run) => [`${run}:ptc:1`, `${run}:ptc:2`]).filter((id) => !starts.has(id))
  return {
    lines: lines.length,
    invalidLines,
    starts: [...starts.values()].reduce((a, b) => a + b, 0),
    settles: [...settles.values()].reduce((a, b) => a + b, 0),
    unmatched,
    orphans,
    missingStarts,
    types,
  }
}

export interface SoakOptions {
  readonly counts: SoakCounts
  /** Progress lines (e.g. console.log); silent by default. */
  readonly progress?: (line: string) => void
}

/** Runs the soak on `runtime` (which the caller creates and disposes). */
export async function runSoak(runtime: CodeRuntime, { counts, progress = () => {} }: SoakOptions): Promise<SoakReport> {
  const dir = mkdtempSync(join(tmpdir(), 'ptc-soak-'))
  const hanging: (() => void)[] = []
  const session = await JsonlSession.open(join(dir, 'session.jsonl'))
  try {
    const tools = new ToolsService()
    for (const tool of soakTools(hanging)) tools.register(tool)
    // cpuMs is a backstop only (the busy loop and the hangs end by their wall): near its heap limit V8
    // collects over and over, and a memory bomb of small arrays burned its 5 s of CPU before reaching
    // 64 MiB on a machine at load 10, ending as timeout instead of memory.
    tools.setExecutor(
      createPtcExecutor({
        runtime,
        mode: 'code',
        limits: { wallMs: 60_000, cpuMs: 20_000, memoryBytes: 64 * MiB, maxOutputBytes: 16 * 1024 },
      }),
    )
    const agent: Agent = { id: 'soak-agent', session }
    const benignFailures: string[] = []
    const hostileMismatches: string[] = []
    const hung: string[] = []
    const benignRuns: string[] = []
    let benign = 0
    let done = 0

    const call = async (i: number): Promise<void> => {
      const p = programFor(i)
      const id = `run${i}`
      const args = {
        code: p.code,
        description: `soak ${i}`,
        ...(p.timeoutMs !== undefined && { timeoutMs: p.timeoutMs }),
      }
      const guardMs = (p.timeoutMs ?? 60_000) + 15_000
      let timer: NodeJS.Timeout | undefined
      const guard = new Promise<'hung'>((resolve) => (timer = setTimeout(() => resolve('hung'), guardMs)))
      const batch = tools.execute({
        calls: [{ type: 'tool_call', id, name: 'run_code', arguments: JSON.stringify(args) }],
        signal: new AbortController().signal,
        agent,
        log: { turn: 1, step: i },
      })
      const started = performance.now()
      const out = await Promise.race([batch, guard])
      clearTimeout(timer)
      done++
      if (out === 'hung') {
        hung.push(`${id} (${p.expect}): no answer ${guardMs} ms after the call`)
        progress(`[soak ${runtime.name}] ${id} (${p.expect}): no answer ${guardMs} ms after the call`)
        return
      }
      const result = out.results[0]?.result
      const outcome = result === undefined ? 'no result' : outcomeOf(result)
      const tookMs = performance.now() - started
      if (tookMs > (p.timeoutMs ?? 0) + 5000)
        progress(`[soak ${runtime.name}] ${id} (${p.expect}) took ${tookMs.toFixed(0)} ms: ${outcome}`)
      if (p.benign) {
        benign++
        benignRuns.push(id)
        if (outcome !== p.expect) benignFailures.push(`${id}: ${outcome}`)
      } else if (outcome !== p.expect) hostileMismatches.push(`${id}: expected ${p.expect}, got ${outcome}`)
    }

    const referenceCall = Math.min(1000, Math.floor(counts.sequential / 2))
    let reference: MemoryPoint | undefined
    const t0 = performance.now()
    for (let i = 0; i < counts.sequential; i++) {
      await call(i)
      if (done === referenceCall) {
        reference = await memory(done)
        progress(`[soak ${runtime.name}] at call ${done}: ${describeMemory(reference)}`)
      }
      if (done % 500 === 0)
        progress(`[soak ${runtime.name}] ${done} calls, rss ${(process.memoryUsage().rss / MiB).toFixed(1)} MiB`)
    }
    const sequentialMs = performance.now() - t0
    const afterSequential = await memory(done)
    progress(`[soak ${runtime.name}] after the sequential calls (${done}): ${describeMemory(afterSequential)}`)
    const t1 = performance.now()
    await Promise.all(Array.from({ length: counts.concurrent }, (_, j) => call(counts.sequential + j)))
    const concurrentMs = performance.now() - t1
    const end = await memory(done)
    progress(`[soak ${runtime.name}] at the end (${done} calls): ${describeMemory(end)}`)

    // Let the never-settling bodies settle now: their late settles must not add a second settle event.
    for (const release of hanging.splice(0)) release()
    await new Promise((resolve) => setTimeout(resolve, 300))
    await session.close()
    return {
      counts,
      benign,
      hostile: done - benign,
      benignFailures,
      hostileMismatches,
      hung,
      reference: reference ?? end,
      afterSequential,
      end,
      sequentialMs,
      concurrentMs,
      log: checkSession(session.path, benignRuns),
    }
  } finally {
    for (const release of hanging.splice(0)) release()
    await session.close()
    rmSync(dir, { recursive: true, force: true })
  }
}

export function describeMemory(m: MemoryPoint): string {
  return `rss ${(m.rss / MiB).toFixed(1)} MiB (host process ${(m.hostRss / MiB).toFixed(1)} MiB), heap ${(m.heapUsed / MiB).toFixed(1)} MiB`
}

/** The long form's rule: RSS (process tree) at the end within 10% of RSS at the reference call. */
export function rssVerdict(report: SoakReport): { ok: boolean; growth: number; text: string } {
  const growth = (report.end.rss - report.reference.rss) / report.reference.rss
  const ok = growth <= 0.1
  const text =
    `rss ${(report.reference.rss / MiB).toFixed(1)} MiB at call ${report.reference.calls} -> ${(report.end.rss / MiB).toFixed(1)} MiB at the end ` +
    `(${report.end.calls} calls): ${(growth * 100).toFixed(1)}% — ${ok ? 'PASS' : 'FAIL'} (flat within 10%)`
  return { ok, growth, text }
}
