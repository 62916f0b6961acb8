/** Runs the built `ptc` binary as a child process, the way a user starts it. */
import { spawn } from 'node:child_process'
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
}

export function ptc(args: readonly string[], options: CliOptions = {}): Promise<CliRun> {
  return new Promise((resolve, reject) => {
    const env = { ...process.env, NODE_OPTIONS: '', ...options.env }
    const child = spawn(process.execPath, [...(options.execArgv ?? []), BIN, ...args], { cwd: options.cwd ?? ROOT, env, stdio: ['pipe', 'pipe', 'pipe'] })
    let stdout = ''
    let stderr = ''
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk))
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk))
    const timer = options.killAfterMs === undefined ? undefined : setTimeout(() => child.kill('SIGKILL'), options.killAfterMs)
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
export function tempDir(files: Readonly<Record<string, string>> = {}): { dir: string; path: (name: string) => string; cleanup: () => void } {
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

/**
 * Runs the binary on a pseudo-terminal (util-linux `script`), typing `typed`
 * ahead; stdin stays open until the binary exits. The output is the terminal's.
 */
export function ptcOnTerminal(args: readonly string[], typed: string): Promise<CliRun> {
  return new Promise((resolve, reject) => {
    const command = [process.execPath, BIN, ...args].map(shellQuote).join(' ')
    const child = spawn('script', ['-qec', command, '/dev/null'], { cwd: ROOT, env: { ...process.env, NODE_OPTIONS: '' }, stdio: ['pipe', 'pipe', 'pipe'] })
    let stdout = ''
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk))
    child.on('error', reject)
    child.on('close', (code) => resolve({ code, stdout, stderr: '' }))
    child.stdin.write(typed)
  })
}
