import { spawn } from 'node:child_process'
import { existsSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'

/** The machine-readable results a script prints with `--json` (see the repository's bench/json.ts). */
export interface BenchResult {
  readonly group?: string
  readonly case: string
  readonly median: number
  readonly unit: string
  readonly better: 'higher' | 'lower'
  readonly baseline?: { readonly case: string; readonly median: number }
  /** When the median is taken across processes: the smallest and largest process figure, and every one. */
  readonly spread?: { readonly min: number; readonly max: number; readonly samples: readonly number[] }
}

/** A runtime a comparison script measured (bench/peers): what it is, how it was driven, why it has no results. */
export interface BenchRuntime {
  /** The `group` of its results. */
  readonly group: string
  readonly kind: 'baseline' | 'ptc' | 'peer'
  readonly method: string
  /** Set when it failed to load or run: the error (then it has no results). */
  readonly error?: string
}

export interface BenchJson {
  readonly script: string
  readonly title: string
  readonly machine: string
  readonly quick: boolean
  readonly results: readonly BenchResult[]
  /** Comparison scripts (bench/peers): the runtimes measured, in table order. */
  readonly runtimes?: readonly BenchRuntime[]
  /** How the figures were taken, one line each. */
  readonly notes?: readonly string[]
}

export const BENCH_JSON_PREFIX = 'PTC_BENCH_JSON '

/** One script of the suite and the backends it measures (`undefined`: backend-independent). */
export interface BenchScript {
  readonly path: string
  readonly backend: 'quickjs' | 'isolated-vm' | undefined
  /** Passes `--backend` on (the script measures several backends). */
  readonly filters: boolean
}

export const BENCH_SCRIPTS: readonly BenchScript[] = [
  { path: 'bench/pipeline/pipeline.ts', backend: undefined, filters: false },
  { path: 'bench/ptc/ptc.ts', backend: undefined, filters: true },
  { path: 'bench/sandbox/quickjs.ts', backend: 'quickjs', filters: false },
  { path: 'bench/sandbox/isolated-vm.ts', backend: 'isolated-vm', filters: false },
]

const isRepoRoot = (dir: string): boolean =>
  existsSync(join(dir, 'bench', 'run.ts')) && existsSync(join(dir, 'pnpm-workspace.yaml'))

/** The clone of the ptc repository that `cwd` is in, or `undefined` outside one. */
export function findRepoRoot(cwd: string): string | undefined {
  for (let dir = resolve(cwd); ; dir = dirname(dir)) {
    if (isRepoRoot(dir)) return dir
    if (dirname(dir) === dir) return undefined
  }
}

export interface ScriptRun {
  readonly script: string
  readonly exitCode: number | null
  readonly seconds: number
  readonly stdout: string
  readonly stderr: string
  readonly json: BenchJson | undefined
}

/** The last `PTC_BENCH_JSON` line of a script's output, or `undefined` when it printed none (or a malformed one). */
export function parseBenchJson(stdout: string): BenchJson | undefined {
  const line = stdout
    .split('\n')
    .reverse()
    .find((l) => l.startsWith(BENCH_JSON_PREFIX))
  if (line === undefined) return undefined
  try {
    const value: unknown = JSON.parse(line.slice(BENCH_JSON_PREFIX.length))
    if (typeof value !== 'object' || value === null || !Array.isArray((value as { results?: unknown }).results))
      return undefined
    return value as BenchJson
  } catch {
    return undefined
  }
}

/** Runs one script in its own node process (the way bench/run.ts does) and collects its output. */
export function runScript(
  root: string,
  script: BenchScript,
  args: readonly string[],
  onTick: (seconds: number) => void,
): Promise<ScriptRun> {
  const started = performance.now()
  const elapsed = (): number => (performance.now() - started) / 1000
  return new Promise((resolvePromise) => {
    const child = spawn(
      process.execPath,
      ['--no-node-snapshot', '--conditions=@ptc/source', '--import', 'tsx', script.path, '--json', ...args],
      {
        cwd: root,
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    )
    const out: Buffer[] = []
    const err: Buffer[] = []
    child.stdout.on('data', (chunk: Buffer) => out.push(chunk))
    child.stderr.on('data', (chunk: Buffer) => err.push(chunk))
    const timer = setInterval(() => onTick(elapsed()), 1000)
    const finish = (exitCode: number | null, extra = ''): void => {
      clearInterval(timer)
      const stdout = Buffer.concat(out).toString('utf8')
      resolvePromise({
        script: script.path,
        exitCode,
        seconds: elapsed(),
        stdout,
        stderr: Buffer.concat(err).toString('utf8') + extra,
        json: parseBenchJson(stdout),
      })
    }
    child.on('error', (error) => finish(null, error.message))
    child.on('close', (code) => finish(code))
  })
}
