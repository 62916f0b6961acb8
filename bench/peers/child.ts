/**
 * One measuring process: loads one runtime, times its first run (cold), then warm trivial runs, then the
 * sequential and the Promise.all program, and prints its figures as one `PEERS_CHILD_JSON` line.
 */
import { median } from '../util.js'
import { expectedValue, programBody, type ProgramKind } from './programs.js'
import type { Driver, RuntimeSpec } from './runtimes/index.js'

export const CHILD_JSON_PREFIX = 'PEERS_CHILD_JSON '

/** The figures of one process. */
export interface ProcessFigures {
  /** Loading the runtime's modules, ms. */
  readonly importMs: number
  /** From creating the runtime to the first (trivial) run's result, ms. */
  readonly coldMs: number
  /** A trivial program after warm-up, ms (median inside the process). */
  readonly warmMs: number
  /** µs per call, `for … await tool({ i })` (median inside the process). */
  readonly sequentialUs: number
  /** µs per call, one `Promise.all` of every call (median inside the process). */
  readonly parallelUs: number
}

export interface ChildPlan {
  readonly calls: number
  /** Untimed runs of each call program first (the host's JIT warms up over the first thousands of calls). */
  readonly warmups: number
  /** Timed repetitions of each call program, after the warm-up runs. */
  readonly repetitions: number
  /** Timed trivial runs (after three warm-up runs). */
  readonly trivialRuns: number
}

async function timedRun(driver: Driver, kind: ProgramKind, calls: number, body: string): Promise<number> {
  const start = performance.now()
  const value = await driver.run(body)
  const ms = performance.now() - start
  if (value !== expectedValue(kind, calls))
    throw new Error(`the ${kind} program gave ${JSON.stringify(value)}, not ${expectedValue(kind, calls)}`)
  return ms
}

export async function measureProcess(spec: RuntimeSpec, plan: ChildPlan): Promise<ProcessFigures> {
  const imported = performance.now()
  const create = await spec.load()
  const created = performance.now()
  const driver = await create()
  try {
    await timedRun(driver, 'trivial', 0, programBody('trivial', 0, spec.tool))
    const coldMs = performance.now() - created
    const trivial = programBody('trivial', 0, spec.tool)
    for (let i = 0; i < 3; i++) await timedRun(driver, 'trivial', 0, trivial)
    const warm: number[] = []
    for (let i = 0; i < plan.trivialRuns; i++) warm.push(await timedRun(driver, 'trivial', 0, trivial))
    const perCall = async (kind: 'sequential' | 'parallel'): Promise<number> => {
      const body = programBody(kind, plan.calls, spec.tool)
      for (let i = 0; i < plan.warmups; i++) await timedRun(driver, kind, plan.calls, body)
      const times: number[] = []
      for (let i = 0; i < plan.repetitions; i++) times.push(await timedRun(driver, kind, plan.calls, body))
      return (median(times) * 1000) / plan.calls
    }
    const sequentialUs = await perCall('sequential')
    const parallelUs = await perCall('parallel')
    return { importMs: created - imported, coldMs, warmMs: median(warm), sequentialUs, parallelUs }
  } finally {
    await driver.dispose()
  }
}

/** What a process prints as its `PEERS_CHILD_JSON` line. */
export type ChildOutcome = { figures: ProcessFigures } | { error: string }

/**
 * Runs the process's measurement and prints its outcome as one line (the parent reads it). No `process.exit`:
 * after @utcp/code-mode's runs it hangs (isolated-vm 5.0.4); the parent ends a process that lingers after its line.
 */
export async function runChild(spec: RuntimeSpec, plan: ChildPlan): Promise<void> {
  let outcome: ChildOutcome
  try {
    outcome = { figures: await measureProcess(spec, plan) }
  } catch (error) {
    outcome = { error: error instanceof Error ? error.message : String(error) }
    process.exitCode = 1
  }
  process.stdout.write(`${CHILD_JSON_PREFIX}${JSON.stringify(outcome)}\n`)
}
