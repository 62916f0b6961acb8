/**
 * ptc's backends next to the other PTC runtimes (the peers), driven with the same programs and the same host
 * tool (see programs.ts and runtimes/). Each runtime is measured in processes of its own, interleaved (every
 * runtime once, then again) for several rounds; each figure is the median across processes, with its spread
 * (max/min) and every process's figure in the JSON.
 *
 *   node --no-node-snapshot --conditions=@ptc/source --import tsx bench/peers/peers.ts [--quick] [--json] [--rounds N] [--runtime ID]… [--backend quickjs|isolated-vm]… [--source]
 *
 * The peers live in bench/peers/node_modules, installed by `ptc bench --peers` (or `npm ci --prefix bench/peers`);
 * a peer that is missing or fails is reported with its error. ptc runs built (dist/) when every package it needs
 * is built, else (or with `--source`) from source. `--runtime` (repeatable): only these runtime ids.
 */
import { spawn, spawnSync } from 'node:child_process'
import { existsSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { peersTable } from '../../packages/cli/src/bench/peers-table.js'
import { argValues, emitBenchJson, quickRequested, type BenchResult, type BenchRuntime } from '../json.js'
import { machine, median } from '../util.js'
import { CHILD_JSON_PREFIX, runChild, type ChildOutcome, type ChildPlan, type ProcessFigures } from './child.js'
import { RUNTIMES, type RuntimeSpec } from './runtimes/index.js'

const ROOT = fileURLToPath(new URL('../..', import.meta.url))
const PEERS_DIR = fileURLToPath(new URL('.', import.meta.url))
const plan: ChildPlan = quickRequested
  ? { calls: 1_000, warmups: 2, repetitions: 2, trivialRuns: 10 }
  : { calls: 2_000, warmups: 2, repetitions: 3, trivialRuns: 20 }

/** The figures, in table order: the `case` of each result and where it comes from. */
const FIGURES: readonly { case: string; unit: string; key: keyof ProcessFigures; vsNode: boolean }[] = [
  { case: 'sequential', unit: 'µs/call', key: 'sequentialUs', vsNode: true },
  { case: 'Promise.all', unit: 'µs/call', key: 'parallelUs', vsNode: true },
  { case: 'warm trivial run', unit: 'ms', key: 'warmMs', vsNode: false },
  { case: 'cold first run', unit: 'ms', key: 'coldMs', vsNode: false },
  { case: 'import', unit: 'ms', key: 'importMs', vsNode: false },
]

const readJson = (path: string): Record<string, unknown> | undefined =>
  existsSync(path) ? (JSON.parse(readFileSync(path, 'utf8')) as Record<string, unknown>) : undefined
const installedVersion = (name: string): string =>
  String(readJson(`${PEERS_DIR}node_modules/${name}/package.json`)?.version ?? 'not installed')

function ptcVersion(): string {
  const commit = spawnSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: ROOT, encoding: 'utf8' }).stdout?.trim()
  return `${String(readJson(`${ROOT}packages/ptc/package.json`)?.version)}${commit ? ` (${commit})` : ''}`
}

/** The row label: the runtime with the versions that were measured. */
function rowLabel(spec: RuntimeSpec): string {
  if (spec.kind === 'baseline') return spec.label.replace(/^plain Node/, `plain Node ${process.version}`)
  if (spec.kind === 'ptc') return spec.label.replace(/^ptc /, `ptc ${ptcVersion()} `)
  const [main, ...rest] = spec.packages
  const engine = rest.map((name) => `${name.replace(/^@jitl\/(quickjs-ng).*/, '$1')} ${installedVersion(name)}`)
  return `${main} ${installedVersion(main ?? '')}${engine.length > 0 ? ` (${engine.join(', ')})` : ''}`
}

const PTC_PACKAGES = ['packages/ptc', 'packages/tools', 'sandbox/runtime', 'sandbox/quickjs', 'sandbox/isolated-vm']

/** Built and not older than its sources (a stale dist/ would measure old code). */
function built(pkg: string): boolean {
  const dist = `${ROOT}${pkg}/dist/index.js`
  if (!existsSync(dist)) return false
  const builtAt = statSync(dist).mtimeMs
  return readdirSync(`${ROOT}${pkg}/src`, { recursive: true, withFileTypes: true }).every(
    (e) => !e.isFile() || statSync(join(e.parentPath, e.name)).mtimeMs <= builtAt,
  )
}

/** ptc runs built, as users get it, when every package it needs is built and current; else from source. */
const source = process.argv.includes('--source') || !PTC_PACKAGES.every(built)

/** Where the measuring processes' script goes as plain JavaScript (beside this file: the peers resolve from here; one per run). */
const CHILD_NAME = `.peers-child-${process.pid}`
const CHILD_BUNDLE = join(PEERS_DIR, `${CHILD_NAME}.mjs`)
let childBundle: Promise<void> | undefined

/**
 * How a measuring process starts. ptc built: this script bundled into plain JavaScript (its own files; every package
 * stays an import), run by plain Node, as a user's process runs ptc, with only the flags its runtime needs
 * (`RuntimeSpec.nodeFlags`: `--no-node-snapshot` for isolated-vm, which slows a process's and its workers' start).
 * Under `--import tsx`, every module a runtime imports after it is created (QuickJS's engine files, the TypeScript
 * stripper) goes through tsx's loader hooks, which added 30-40 ms to ptc's cold first run (inline: 48-56 ms plain,
 * 80-90 with the hooks) and nothing to the peers' (theirs import nothing then). From source, tsx is what runs it.
 */
async function childCommand(spec: RuntimeSpec): Promise<string[]> {
  const flags = spec.nodeFlags ?? []
  if (source) return [...flags, '--conditions=@ptc/source', '--import', 'tsx', fileURLToPath(import.meta.url)]
  childBundle ??= (async () => {
    const { build } = await import('tsup')
    await build({
      config: false,
      entry: { [CHILD_NAME]: fileURLToPath(import.meta.url) },
      outDir: PEERS_DIR,
      format: ['esm'],
      outExtension: () => ({ js: '.mjs' }),
      platform: 'node',
      target: 'node20',
      external: [/^@ptc\//],
      skipNodeModulesBundle: true,
      clean: false,
      silent: true,
    })
  })()
  await childBundle
  return [...flags, CHILD_BUNDLE]
}

/** Runs one process of `spec`; one that is still alive 10 s after its line is killed (a peer's handle left open). */
async function measureInChild(spec: RuntimeSpec): Promise<ChildOutcome> {
  const args = [...(await childCommand(spec)), '--child', spec.id, ...(quickRequested ? ['--quick'] : [])]
  return new Promise((resolve) => {
    const child = spawn(process.execPath, args, {
      cwd: ROOT,
      env: { ...process.env, NODE_OPTIONS: '' },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let stdout = ''
    let stderr = ''
    let outcome: ChildOutcome | undefined
    const kill = (): boolean => child.kill('SIGKILL')
    let timer = setTimeout(kill, 300_000)
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk))
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk
      const line =
        outcome === undefined
          ? stdout.split('\n').find((l) => l.startsWith(CHILD_JSON_PREFIX) && stdout.includes('\n', stdout.indexOf(l)))
          : undefined
      if (line === undefined) return
      outcome = JSON.parse(line.slice(CHILD_JSON_PREFIX.length)) as ChildOutcome
      clearTimeout(timer)
      timer = setTimeout(kill, 10_000)
    })
    child.on('close', (code, signal) => {
      clearTimeout(timer)
      const lastLine =
        stderr
          .trim()
          .split('\n')
          .filter((l) => l.trim() !== '')
          .at(-1) ?? ''
      resolve(
        outcome ?? {
          error: `${lastLine || 'no output'} (${signal === null ? `exit ${String(code)}` : `killed by ${signal}`})`,
        },
      )
    })
  })
}

async function main(): Promise<void> {
  const only = argValues('runtime')
  const backends = argValues('backend')
  const rounds = Number(argValues('rounds')[0] ?? (quickRequested ? 2 : 5))
  if (!Number.isInteger(rounds) || rounds < 1) throw new Error('--rounds must be a positive integer')
  const unknown = only.filter((id) => !RUNTIMES.some((s) => s.id === id))
  if (unknown.length > 0)
    throw new Error(`unknown runtime ${unknown.join(', ')}; one of ${RUNTIMES.map((s) => s.id).join(', ')}`)
  const selected = RUNTIMES.filter(
    (s) =>
      (only.length === 0 || only.includes(s.id)) &&
      (s.kind !== 'ptc' || backends.length === 0 || (s.backend !== undefined && backends.includes(s.backend))),
  )
  const samples = new Map<RuntimeSpec, ProcessFigures[]>(selected.map((s) => [s, []]))
  const errors = new Map<RuntimeSpec, string>()
  try {
    for (let round = 1; round <= rounds; round++) {
      for (const spec of selected) {
        if (errors.has(spec)) continue // failed once: reported, not retried
        process.stderr.write(`round ${round}/${rounds}: ${spec.id} …\n`)
        const outcome = await measureInChild(spec)
        if ('error' in outcome) errors.set(spec, outcome.error)
        else samples.get(spec)?.push(outcome.figures)
      }
    }
  } finally {
    rmSync(CHILD_BUNDLE, { force: true })
  }

  const labels = new Map(selected.map((s) => [s, rowLabel(s)]))
  const results: BenchResult[] = []
  const node = samples.get(RUNTIMES[0] as RuntimeSpec) ?? []
  for (const spec of selected) {
    const figures = samples.get(spec) ?? []
    if (figures.length === 0 || errors.has(spec)) continue
    for (const f of FIGURES) {
      const values = figures.map((p) => p[f.key])
      const nodeValues = node.map((p) => p[f.key])
      const baseline =
        f.vsNode && spec.kind !== 'baseline' && nodeValues.length > 0
          ? { baseline: { case: 'plain Node', median: median(nodeValues) } }
          : {}
      results.push({
        group: labels.get(spec) ?? spec.id,
        case: f.case,
        median: median(values),
        unit: f.unit,
        better: 'lower',
        ...baseline,
        spread: { min: Math.min(...values), max: Math.max(...values), samples: values },
      })
    }
  }
  const runtimes: BenchRuntime[] = selected.map((s) => ({
    group: labels.get(s) ?? s.id,
    kind: s.kind,
    method: s.method,
    ...(errors.has(s) ? { error: errors.get(s) as string } : {}),
  }))
  const byMethod = new Map<string, string[]>()
  for (const r of runtimes) byMethod.set(r.method, [...(byMethod.get(r.method) ?? []), r.group])
  const notes = [
    `Method: each runtime in processes of its own, interleaved (every runtime once per round), ${rounds} rounds; each cell is the median across processes, (Nx) its spread max/min. ` +
      `Per process: the first run (a trivial program) timed from creating the runtime (cold; "import" is loading its modules before that), then 3 warm-up and ${plan.trivialRuns} timed trivial runs (median), ` +
      `then ${plan.calls} calls sequentially (\`for … await tool({ i })\`) and under one Promise.all, each ${plan.warmups} warm-up and ${plan.repetitions} timed runs (median). Host tool: \`async ({ i }) => { await null; return { ok: true, i } }\`.`,
    `ptc ran ${source ? 'from source (tsx, --conditions=@ptc/source; its dist/ missing, older than src/ or --source)' : 'built (dist/, newer than src/), each process plain Node running this script bundled into JavaScript'}; peers from bench/peers/node_modules. ` +
      'A process runs with the Node flags its runtime needs and no others: --no-node-snapshot (which slows the start of a process and of its worker threads) for the runtimes on isolated-vm only.',
    ...[...byMethod.entries()].map(([method, groups]) => `${groups.join('; ')}: ${method}.`),
  ]
  if ([...errors.values()].some((e) => /Cannot find (package|module)/.test(e)))
    notes.push('A peer is not installed: `ptc bench --peers` installs them (or `npm ci --prefix bench/peers`).')

  const title = `ptc and its peers — ${machine()} — ${plan.calls} calls per program, ${rounds} processes per runtime`
  console.log(`${title}\n`)
  for (const line of peersTable({
    script: 'peers',
    title,
    machine: machine(),
    quick: quickRequested,
    results,
    runtimes,
    notes,
  }))
    console.log(line)
  emitBenchJson('peers', title, results, { runtimes, notes })
}

const childId = argValues('child')[0]
if (childId !== undefined) {
  const spec = RUNTIMES.find((s) => s.id === childId)
  if (spec === undefined) throw new Error(`unknown runtime ${childId}; one of ${RUNTIMES.map((s) => s.id).join(', ')}`)
  await runChild(spec, plan)
} else {
  await main()
}
