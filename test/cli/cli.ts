/** Runs the built `ptc` binary as a child process, the way a user starts it. */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { BIN, ROOT } from './build.js'

export interface CliRun {
  readonly code: number | null
  readonly stdout: string
  readonly stderr: string
}

export interface CliOptions {
  readonly cwd?: string
  /** Written to stdin (stdin is closed either way, so it is never a TTY). */
  readonly input?: string
  readonly env?: Readonly<Record<string, string>>
  readonly execArgv?: readonly string[]
  /** Kill the child after this long (a hang fails the test instead of the suite); `code` is then `null`. */
  readonly killAfterMs?: number
  /** Given the child once started (to signal it). */
  readonly onSpawn?: (child: ChildProcess) => void
}

/** The test runner's environment without what would change the output: colour is asked for by each test. */
function baseEnv(): NodeJS.ProcessEnv {
  const { NO_COLOR: _noColor, FORCE_COLOR: _forceColor, ...env } = process.env
  return { ...env, NODE_OPTIONS: '' }
}

export function ptc(args: readonly string[], options: CliOptions = {}): Promise<CliRun> {
  return new Promise((resolve, reject) => {
    const env = { ...baseEnv(), ...options.env }
    const child = spawn(process.execPath, [...(options.execArgv ?? []), BIN, ...args], {
      cwd: options.cwd ?? ROOT,
      env,
      stdio: ['pipe', 'pipe', 'pipe'],
    })
    options.onSpawn?.(child)
    let stdout = ''
    let stderr = ''
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk))
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk))
    const timer =
      options.killAfterMs === undefined ? undefined : setTimeout(() => child.kill('SIGKILL'), options.killAfterMs)
    child.on('error', reject)
    child.on('close', (code) => {
      clearTimeout(timer)
      resolve({ code, stdout, stderr })
    })
    child.stdin.on('error', () => undefined) // a child that exits before reading all of the input
    child.stdin.end(options.input ?? '')
  })
}

/** A temporary folder with the given files; `cleanup()` removes it. */
export function tempDir(files: Readonly<Record<string, string>> = {}): {
  dir: string
  path: (name: string) => string
  cleanup: () => void
} {
  const dir = mkdtempSync(join(tmpdir(), 'ptc-cli-test-'))
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text)
  return { dir, path: (name) => join(dir, name), cleanup: () => rmSync(dir, { recursive: true, force: true }) }
}

/** Nothing on stderr looks like a stack trace. */
export function noStack(stderr: string): boolean {
  return !/^\s+at .+[(:]\d+/m.test(stderr) && !stderr.includes('node:internal')
}

/** The one `ptc: …` line a failing command prints on stderr. */
export function reason(run: CliRun): string {
  return run.stderr.trim().split('\n').at(-1) ?? ''
}

const shellQuote = (arg: string): string => `'${arg.replace(/'/g, `'\\''`)}'`

export interface TerminalOptions {
  readonly env?: Readonly<Record<string, string>>
  /** Send stdout to this file instead (stderr alone is the terminal then). */
  readonly stdoutFile?: string
}

/** A run of the binary on a pseudo-terminal (util-linux `script`); stdin stays open until it exits. */
export interface TerminalRun {
  /** Typed on the terminal (`\x03` is Ctrl-C: SIGINT to the binary). */
  type(text: string): void
  /** What the terminal showed so far (stdout and stderr together). */
  screen(): string
  /** Resolves when the text appears on the terminal (rejects after `ms`). */
  waitFor(text: string, ms?: number): Promise<void>
  readonly done: Promise<CliRun>
}

export function onTerminal(args: readonly string[], options: TerminalOptions = {}): TerminalRun {
  // `exec`: the shell `script` starts (`$SHELL`: /bin/sh, whatever the caller's is) becomes the binary. A
  // shell that stays in between is in the terminal's foreground group too: dash dies of the Ctrl-C the
  // binary handles, and `script` then reports 130 whatever the binary does.
  const command = `exec ${[process.execPath, BIN, ...args].map(shellQuote).join(' ')}${options.stdoutFile === undefined ? '' : ` > ${shellQuote(options.stdoutFile)}`}`
  const child = spawn('script', ['-qec', command, '/dev/null'], {
    cwd: ROOT,
    env: { ...baseEnv(), TERM: 'xterm', SHELL: '/bin/sh', ...options.env },
    stdio: ['pipe', 'pipe', 'pipe'],
  })
  let screen = ''
  const waiters = new Set<() => void>()
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    screen += chunk
    for (const check of waiters) check()
  })
  const done = new Promise<CliRun>((resolve, reject) => {
    child.on('error', reject)
    child.on('close', (code) => resolve({ code, stdout: screen, stderr: '' }))
  })
  return {
    type: (text) => void child.stdin.write(text),
    screen: () => screen,
    waitFor: (text, ms = 20_000) =>
      new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          waiters.delete(check)
          reject(
            new Error(
              `${JSON.stringify(text)} did not appear on the terminal within ${ms} ms; it shows ${JSON.stringify(screen.slice(-300))}`,
            ),
          )
        }, ms)
        const check = (): void => {
          if (!screen.includes(text)) return
          clearTimeout(timer)
          waiters.delete(check)
          resolve()
        }
        waiters.add(check)
        check()
      }),
    done,
  }
}

/**
 * Runs the binary on a pseudo-terminal (util-linux `script`), typing `typed`
 * ahead; stdin stays open until the binary exits. The output is the terminal's
 * (stdout and stderr together).
 */
export function ptcOnTerminal(
  args: readonly string[],
  typed: string,
  env: Readonly<Record<string, string>> = {},
): Promise<CliRun> {
  const run = onTerminal(args, { env })
  run.type(typed)
  return run.done
}

/** Whether util-linux `script` can give the binary a pseudo-terminal here. */
export function hasScript(): boolean {
  try {
    execFileSync('script', ['--version'], { stdio: 'ignore' })
    return process.platform === 'linux'
  } catch {
    return false
  }
}
