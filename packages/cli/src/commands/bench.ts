import { existsSync } from 'node:fs'
import { mkdir, writeFile } from 'node:fs/promises'
import { join, relative, resolve } from 'node:path'
import { noPositional, oneOf, parseCommandArgs } from '../args.js'
import { ratioChart } from '../bench/chart.js'
import { BENCH_SCRIPTS, findRepoRoot, runScript, type ScriptRun } from '../bench/scripts.js'
import { benchTable } from '../bench/table.js'
import { escapeControl } from '../escape.js'
import { CliError } from '../errors.js'
import { MESSAGE_PREFIX, writeLine, writeMessage, type CliIo } from '../io.js'
import { SANDBOXES } from '../runtime.js'

export const BENCH_USAGE = `ptc bench [--quick] [--backend quickjs|isolated-vm]… [--out DIR]
  Runs the benchmark suite of the repository's bench/ folder (each script in its own process),
  prints a table of medians and cost ratios against the baselines measured in the same process,
  and writes results.json, chart.svg and each script's output to DIR (default .ptc-bench/<time>/).
  Works inside a clone of the ptc repository only.`

const OPTIONS = { quick: { type: 'boolean' }, backend: { type: 'string', multiple: true }, out: { type: 'string' } } as const

/** `ptc bench`: 0 when every script ran, 1 when one failed, 2 outside the repository or on bad usage. */
export async function benchCommand(args: readonly string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseCommandArgs('bench', args, OPTIONS)
  noPositional('bench', positionals)
  const backends = (values.backend ?? []).map((b) => oneOf('backend', b, SANDBOXES) ?? 'quickjs')
  const root = findRepoRoot(io.cwd)
  if (root === undefined) {
    throw new CliError('UNAVAILABLE', 'bench runs the benchmark scripts of the ptc repository (bench/), which are not installed with the package; run it inside a clone of the repository')
  }
  const quick = values.quick === true
  const scripts = BENCH_SCRIPTS.filter((s) => (s.backend === undefined || backends.length === 0 || backends.includes(s.backend)) && existsSync(join(root, s.path)))
  const stamp = new Date().toISOString().replace(/:/g, '-').replace(/\..*$/, '')
  const outDir = values.out === undefined ? join(root, '.ptc-bench', stamp) : resolve(io.cwd, values.out)
  const tty = (io.stderr as { isTTY?: boolean }).isTTY === true
  const runs: ScriptRun[] = []
  const started = performance.now()
  for (const [i, script] of scripts.entries()) {
    const head = `[${i + 1}/${scripts.length}] ${script.path}`
    if (!tty) writeMessage(io.stderr, `${head} …`)
    const args = [...(quick ? ['--quick'] : []), ...(script.filters ? backends.flatMap((b) => ['--backend', b]) : [])]
    const run = await runScript(root, script, args, (s) => tty && io.stderr.write(`\r${MESSAGE_PREFIX}${escapeControl(head)} … ${s.toFixed(0)} s`))
    runs.push(run)
    const status = run.exitCode !== 0 ? `failed (exit ${String(run.exitCode)})` : run.json === undefined ? 'done, no machine-readable results' : `done, ${run.json.results.length} results`
    if (tty) io.stderr.write('\r') // back over the progress line (writeLine would print `\r` visibly)
    writeMessage(io.stderr, `${head} ${status} in ${run.seconds.toFixed(1)} s`)
    if (run.exitCode !== 0) writeLine(io.stderr, indentTail(run.stderr || run.stdout))
  }
  const totalSeconds = (performance.now() - started) / 1000
  const rows = runs.flatMap((run) => (run.json?.results ?? []).map((result) => ({ script: run.json?.script ?? run.script, result })))
  for (const line of benchTable(rows)) writeLine(io.stdout, line)

  await mkdir(outDir, { recursive: true })
  const machine = runs.find((r) => r.json !== undefined)?.json?.machine ?? `Node ${process.version}`
  const summary = {
    date: new Date().toISOString(),
    machine,
    quick,
    backends: backends.length === 0 ? 'all' : backends,
    seconds: Math.round(totalSeconds * 10) / 10,
    scripts: runs.map((r) => ({ script: r.script, exitCode: r.exitCode, seconds: Math.round(r.seconds * 10) / 10, title: r.json?.title ?? null, results: r.json?.results ?? null })),
  }
  await writeFile(join(outDir, 'results.json'), `${JSON.stringify(summary, null, 2)}\n`)
  await writeFile(join(outDir, 'chart.svg'), ratioChart(`ptc bench${quick ? ' --quick' : ''} — ${machine}`, rows))
  for (const run of runs) await writeFile(join(outDir, `${run.script.replace(/^bench\//, '').replace(/[/.]/g, '-')}.txt`), run.stdout + run.stderr)
  const shown = relative(io.cwd, outDir)
  writeMessage(io.stderr, `${runs.length} scripts in ${totalSeconds.toFixed(1)} s; results in ${shown === '' || shown.startsWith('..') ? outDir : shown}/ (results.json, chart.svg)`)
  return runs.every((r) => r.exitCode === 0) ? 0 : 1
}

function indentTail(text: string): string {
  return text.trimEnd().split('\n').slice(-8).map((l) => `    ${l}`).join('\n')
}
