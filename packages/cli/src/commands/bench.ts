import { existsSync } from 'node:fs'
import { mkdir, writeFile } from 'node:fs/promises'
import { join, relative, resolve } from 'node:path'
import { noPositional, oneOf, parseCommandArgs } from '../args.js'
import { ratioChart } from '../bench/chart.js'
import { installPeers, PEERS_DIR, PEERS_SCRIPT, peersInstallState } from '../bench/peers-install.js'
import { peersTable } from '../bench/peers-table.js'
import { BENCH_SCRIPTS, findRepoRoot, runScript, type ScriptRun } from '../bench/scripts.js'
import { benchTable } from '../bench/table.js'
import { escapeControl } from '../escape.js'
import { CliError } from '../errors.js'
import { MESSAGE_PREFIX, writeLine, writeMessage, type CliIo } from '../io.js'
import { SANDBOXES } from '../runtime.js'

export const BENCH_USAGE = `ptc bench [--quick] [--backend quickjs|isolated-vm]… [--out DIR]
ptc bench --peers [--quick] [--backend quickjs|isolated-vm]… [--out DIR]
  Runs the benchmark suite of the repository's bench/ folder (each script in its own process),
  prints a table of medians and cost ratios against the baselines measured in the same process,
  and writes results.json, chart.svg and each script's output to DIR (default .ptc-bench/<time>/).
  --peers: instead, ptc's backends next to other PTC runtimes (@utcp/code-mode, @mondaydotcomorg/atp-server,
  @sebastianwessel/quickjs) and plain Node (the program calling the tool, or across a worker thread or a child
  process: the floors of a sandbox off the host's thread) with the same programs and host tool, each runtime in
  processes of its own; one table with the versions, the method and each peer's caveats. The peers are installed first when
  missing, into bench/peers/node_modules with npm ci (pinned by bench/peers/package-lock.json).
  Works inside a clone of the ptc repository only.`

const OPTIONS = {
  quick: { type: 'boolean' },
  peers: { type: 'boolean' },
  backend: { type: 'string', multiple: true },
  out: { type: 'string' },
} as const

/** `ptc bench`: 0 when every script ran, 1 when one failed, 2 outside the repository or on bad usage. */
export async function benchCommand(args: readonly string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseCommandArgs('bench', args, OPTIONS)
  noPositional('bench', positionals)
  const backends = (values.backend ?? []).map((b) => oneOf('backend', b, SANDBOXES) ?? 'quickjs')
  const root = findRepoRoot(io.cwd)
  if (root === undefined) {
    throw new CliError(
      'UNAVAILABLE',
      'bench runs the benchmark scripts of the ptc repository (bench/), which are not installed with the package; ' +
        'run it inside a clone of the repository',
    )
  }
  const quick = values.quick === true
  const peers = values.peers === true
  const scripts = peers
    ? [PEERS_SCRIPT]
    : BENCH_SCRIPTS.filter(
        (s) =>
          (s.backend === undefined || backends.length === 0 || backends.includes(s.backend)) &&
          existsSync(join(root, s.path)),
      )
  if (peers && !existsSync(join(root, PEERS_SCRIPT.path)))
    throw new CliError('UNAVAILABLE', `bench --peers needs ${PEERS_SCRIPT.path}, which this clone does not have`)
  if (peers && !(await ensurePeers(root, io))) return 1
  const stamp = new Date().toISOString().replace(/:/g, '-').replace(/\..*$/, '')
  const outDir = values.out === undefined ? join(root, '.ptc-bench', stamp) : resolve(io.cwd, values.out)
  const tty = (io.stderr as { isTTY?: boolean }).isTTY === true
  const runs: ScriptRun[] = []
  const started = performance.now()
  for (const [i, script] of scripts.entries()) {
    const head = `[${i + 1}/${scripts.length}] ${script.path}`
    if (!tty) writeMessage(io.stderr, `${head} …`)
    const args = [...(quick ? ['--quick'] : []), ...(script.filters ? backends.flatMap((b) => ['--backend', b]) : [])]
    const run = await runScript(
      root,
      script,
      args,
      (s) => tty && io.stderr.write(`\r${MESSAGE_PREFIX}${escapeControl(head)} … ${s.toFixed(0)} s`),
    )
    runs.push(run)
    const status =
      run.exitCode !== 0
        ? `failed (exit ${String(run.exitCode)})`
        : run.json === undefined
          ? 'done, no machine-readable results'
          : `done, ${run.json.results.length} results`
    if (tty) io.stderr.write('\r') // back over the progress line (writeLine would print `\r` visibly)
    writeMessage(io.stderr, `${head} ${status} in ${run.seconds.toFixed(1)} s`)
    if (run.exitCode !== 0) writeLine(io.stderr, indentTail(run.stderr || run.stdout))
  }
  const totalSeconds = (performance.now() - started) / 1000
  const rows = runs.flatMap((run) =>
    (run.json?.results ?? []).map((result) => ({ script: run.json?.script ?? run.script, result })),
  )
  const table = peers
    ? runs.flatMap((run) => (run.json === undefined ? [] : [run.json.title, '', ...peersTable(run.json)]))
    : benchTable(rows)
  for (const line of table) writeLine(io.stdout, line)

  await mkdir(outDir, { recursive: true })
  const machine = runs.find((r) => r.json !== undefined)?.json?.machine ?? `Node ${process.version}`
  const summary = {
    date: new Date().toISOString(),
    machine,
    quick,
    backends: backends.length === 0 ? 'all' : backends,
    peers,
    seconds: Math.round(totalSeconds * 10) / 10,
    scripts: runs.map((r) => ({
      script: r.script,
      exitCode: r.exitCode,
      seconds: Math.round(r.seconds * 10) / 10,
      title: r.json?.title ?? null,
      results: r.json?.results ?? null,
      ...(r.json?.runtimes === undefined ? {} : { runtimes: r.json.runtimes, notes: r.json.notes ?? [] }),
    })),
  }
  await writeFile(join(outDir, 'results.json'), `${JSON.stringify(summary, null, 2)}\n`)
  await writeFile(
    join(outDir, 'chart.svg'),
    ratioChart(`ptc bench${peers ? ' --peers' : ''}${quick ? ' --quick' : ''} — ${machine}`, rows),
  )
  for (const run of runs)
    await writeFile(
      join(outDir, `${run.script.replace(/^bench\//, '').replace(/[/.]/g, '-')}.txt`),
      run.stdout + run.stderr,
    )
  const shown = relative(io.cwd, outDir)
  writeMessage(
    io.stderr,
    `${runs.length} scripts in ${totalSeconds.toFixed(1)} s; results in ` +
      `${shown === '' || shown.startsWith('..') ? outDir : shown}/ (results.json, chart.svg)`,
  )
  return runs.every((r) => r.exitCode === 0) ? 0 : 1
}

/** Installs the peers when they are missing or older than the lock; false (after saying why) when that failed. */
async function ensurePeers(root: string, io: CliIo): Promise<boolean> {
  const state = peersInstallState(root)
  if (state === 'installed') return true
  writeMessage(
    io.stderr,
    `${state === 'missing' ? 'the peers are not installed' : 'the peers are older than bench/peers/package-lock.json'}: installing them into ${PEERS_DIR}/node_modules ` +
      '(npm ci; about 340 packages, and isolated-vm 5.0.4 may compile from source: a minute or two) …',
  )
  const install = await installPeers(root)
  if (install.ok) {
    writeMessage(io.stderr, `peers installed in ${install.seconds.toFixed(1)} s`)
    return true
  }
  writeMessage(io.stderr, `installing the peers failed after ${install.seconds.toFixed(1)} s (npm ci in ${PEERS_DIR}):`)
  writeLine(io.stderr, indentTail(install.output))
  return false
}

function indentTail(text: string): string {
  return text
    .trimEnd()
    .split('\n')
    .slice(-8)
    .map((l) => `    ${l}`)
    .join('\n')
}
