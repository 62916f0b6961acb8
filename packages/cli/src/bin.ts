#!/usr/bin/env node
/**
 * The `ptc` binary. isolated-vm needs node to run with `--no-node-snapshot`
 * (Node 20+): when `isolated-vm` is asked for (on the command line, or by the
 * config when no `--sandbox` is given) and the flag is missing, the binary
 * starts itself again with the flag and passes the exit status on.
 */
import { spawn } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { configChoosesIsolatedVm, splitConfigOption } from './config/load.js'
import { escapeControl } from './escape.js'
import { firstLine } from './errors.js'
import { processIo } from './io.js'
import { main } from './main.js'

const argv = process.argv.slice(2)
const FLAG = '--no-node-snapshot'
const wantsIsolatedVm =
  argv.some((arg) => arg === 'isolated-vm' || arg.endsWith('=isolated-vm')) || configWantsIsolatedVm(argv)
const hasFlag = process.execArgv.includes(FLAG) || (process.env['NODE_OPTIONS'] ?? '').split(/\s+/).includes(FLAG)

if (wantsIsolatedVm && !hasFlag && process.env['PTC_REEXEC'] !== '1') {
  const child = spawn(process.execPath, [FLAG, ...process.execArgv, fileURLToPath(import.meta.url), ...argv], {
    stdio: 'inherit',
    env: { ...process.env, PTC_REEXEC: '1' },
  })
  const forward = (signal: NodeJS.Signals): void => void child.kill(signal)
  process.on('SIGINT', forward)
  process.on('SIGTERM', forward)
  child.on('error', (error) => {
    process.stderr.write(`${escapeControl(`ptc: cannot restart node with ${FLAG}: ${error.message}`)}\n`)
    process.exitCode = 2
  })
  child.on('exit', (code, signal) => {
    process.exitCode = code ?? (signal === null ? 1 : 128 + 2)
  })
} else {
  // Not a top-level await: Node 22+ warns about an unsettled one at exit, before the message `runMain` prints.
  void runMain().then(async (code) => {
    process.exitCode = code
    // Done: a tools module or a tool may still hold the event loop (a timer, a socket); leave once the output is out.
    await Promise.all([flushed(process.stdout), flushed(process.stderr)])
    process.exit()
  }, rethrow)
}

/** An error `main` let through becomes an uncaught exception, as it was under a top-level await. */
function rethrow(error: unknown): void {
  process.nextTick(() => {
    throw error
  })
}

/**
 * `main` with the process's streams. A reader that closes stdout or stderr
 * early (`ptc log big.jsonl | head`) ends the command quietly (`ptc serve` stops by itself); an exception
 * nothing catches is one line and exit 1, a stray rejection a warning; a command that
 * can never finish (a tools module whose import awaits forever, so nothing is
 * left to run) says so and exits 1 instead of leaving with Node's status 13.
 */
async function runMain(): Promise<number> {
  let finished = false
  for (const stream of [process.stdout, process.stderr]) {
    stream.on('error', (error: NodeJS.ErrnoException) => {
      // `ptc serve` goes on without stderr, and stops by itself without stdout, its upstreams and log closed.
      if (argv[0] === 'serve') return
      finished = true
      process.exit(error.code === 'EPIPE' ? (typeof process.exitCode === 'number' ? process.exitCode : 0) : 1)
    })
  }
  // A tool or a tools module may throw or reject outside any call (in a timer, a forgotten promise): say so in
  // one escaped line instead of Node's stack trace with the raw message.
  process.on('unhandledRejection', (reason) => {
    process.stderr.write(
      `${escapeControl(`ptc: warning: a promise was rejected and never handled (a tool or tools module?): ${firstLine(reason)}`)}\n`,
    )
  })
  process.on('uncaughtException', (error) => {
    finished = true
    process.stderr.write(
      `${escapeControl(`ptc: internal error: an exception outside any call (a tool or tools module?): ${firstLine(error)} (set PTC_DEBUG=1 for the stack)`)}\n`,
    )
    if (process.env['PTC_DEBUG'] === '1' && typeof error?.stack === 'string')
      process.stderr.write(`${escapeControl(error.stack, { multiline: true })}\n`)
    process.exit(1)
  })
  process.on('exit', () => {
    if (finished) return
    process.stderr.write(
      'ptc: the command stopped before it finished: something it waited for can never settle (a tools module whose ' +
        'import never completes, or a tool that never answers)\n',
    )
    process.exitCode = 1
  })
  const code = await main(argv, processIo())
  finished = true
  return code
}

function flushed(stream: NodeJS.WriteStream): Promise<void> {
  return new Promise((resolve) => void stream.write('', () => resolve()))
}

/** The config of a command that reads one chooses isolated-vm, and no `--sandbox` overrides it. */
function configWantsIsolatedVm(args: readonly string[]): boolean {
  if (
    !['run', 'serve'].includes(args[0] ?? '') ||
    args.some((arg) => arg === '--sandbox' || arg.startsWith('--sandbox='))
  )
    return false
  try {
    return configChoosesIsolatedVm(splitConfigOption(args.slice(1)).config, process.cwd())
  } catch {
    return false // the command says what is wrong with its options
  }
}
