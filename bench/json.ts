/**
 * The machine-readable form of a benchmark script's results, for `ptc bench`:
 * with `--json`, a script prints its usual table and then, as its last line,
 * `PTC_BENCH_JSON ` followed by one `BenchJson` object.
 */
import { machine } from './util.js'

export const BENCH_JSON_PREFIX = 'PTC_BENCH_JSON '

export interface BenchResult {
  /** What varies between rows of one script, e.g. the backend (`quickjs (worker)`). */
  readonly group?: string
  readonly case: string
  readonly median: number
  /** `calls/s`, `ms`, `us/call`, `runs/s`, … */
  readonly unit: string
  readonly better: 'higher' | 'lower'
  /** The same quantity measured in the same process for the baseline (same unit). */
  readonly baseline?: { readonly case: string; readonly median: number }
}

export interface BenchJson {
  readonly script: string
  readonly title: string
  readonly machine: string
  readonly quick: boolean
  readonly results: readonly BenchResult[]
}

export const jsonRequested = process.argv.includes('--json')
export const quickRequested = process.argv.includes('--quick')

/** Prints the `PTC_BENCH_JSON` line when the script was started with `--json`. */
export function emitBenchJson(script: string, title: string, results: readonly BenchResult[]): void {
  if (!jsonRequested) return
  const json: BenchJson = { script, title, machine: machine(), quick: quickRequested, results }
  console.log(`${BENCH_JSON_PREFIX}${JSON.stringify(json)}`)
}

/** The values of a repeatable `--name value` argument. */
export function argValues(name: string): string[] {
  const values: string[] = []
  process.argv.forEach((arg, i) => {
    if (arg === `--${name}` && process.argv[i + 1] !== undefined) values.push(process.argv[i + 1] as string)
    else if (arg.startsWith(`--${name}=`)) values.push(arg.slice(name.length + 3))
  })
  return values
}
