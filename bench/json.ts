/**
 * The machine-readable form of a benchmark script's results, for `ptc bench`:
 * with `--json`, a script prints its usual table and then, as its last line,
 * `PTC_BENCH_JSON ` followed by one `BenchJson` object.
 */
import type { BenchJson, BenchResult, BenchRuntime } from '@ptc/cli'
import { machine } from './util.js'

export type { BenchJson, BenchResult, BenchRuntime }

/** The marker `ptc bench` looks for (`BENCH_JSON_PREFIX` of @ptc/cli; not imported, so scripts do not load the CLI). */
const BENCH_JSON_PREFIX = 'PTC_BENCH_JSON '

export const jsonRequested = process.argv.includes('--json')
export const quickRequested = process.argv.includes('--quick')

/** Prints the `PTC_BENCH_JSON` line when the script was started with `--json` (`extra`: a comparison's runtimes and notes). */
export function emitBenchJson(
  script: string,
  title: string,
  results: readonly BenchResult[],
  extra: Pick<BenchJson, 'runtimes' | 'notes'> = {},
): void {
  if (!jsonRequested) return
  const json: BenchJson = { script, title, machine: machine(), quick: quickRequested, results, ...extra }
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
