/** `ptc serve` (from source) as a real child process over stdio, for the tests of how the process itself behaves. */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { INITIALIZE, until } from './http-helpers.js'

export const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..')
export const tsNode = ['--conditions=@ptc/source', '--import', 'tsx']
export const fixture = join(root, 'packages/mcp/src/testing/fixture-server.ts')

export interface ServeProcess {
  readonly child: ChildProcessWithoutNullStreams
  /** What it wrote on stdout and stderr so far. */
  stdout(): string
  stderr(): string
  /** Write one JSON-RPC message on its stdin. */
  send(message: unknown): void
  /** Initialize the MCP session (and wait for the answer). */
  initialize(): Promise<void>
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>
  /** SIGKILL it if it still runs. */
  kill(): void
}

/** The two binaries that serve: `@ptc/mcp`'s and the `ptc` CLI's `serve` command. */
export const SERVE_BINARIES = {
  'ptc-mcp': [join(root, 'packages/mcp/src/bin.ts')],
  'ptc serve': [join(root, 'packages/cli/src/bin.ts'), 'serve'],
} as const

/** Start `ptc serve` with `args` (by default through `@ptc/mcp`'s binary). */
export function spawnServe(args: string[], binary: keyof typeof SERVE_BINARIES = 'ptc-mcp'): ServeProcess {
  const child = spawn(process.execPath, [...tsNode, ...SERVE_BINARIES[binary], ...args], {
    cwd: root,
    stdio: ['pipe', 'pipe', 'pipe'],
  })
  let stdout = ''
  let stderr = ''
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()))
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()))
  // A test may close them on purpose.
  child.stdout.on('error', () => undefined)
  child.stderr.on('error', () => undefined)
  child.stdin.on('error', () => undefined)
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((done) =>
    child.once('exit', (code, signal) => done({ code, signal })),
  )
  const send = (message: unknown): void => void child.stdin.write(`${JSON.stringify(message)}\n`)
  return {
    child,
    stdout: () => stdout,
    stderr: () => stderr,
    send,
    async initialize() {
      send(INITIALIZE)
      // tsx compiling ptc serve and its upstream took over 20 s with two suites on two cores.
      await until(() => stdout.includes('"id":1'), 60_000)
      send({ jsonrpc: '2.0', method: 'notifications/initialized' })
    },
    exited,
    kill() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
    },
  }
}

/** Whether process `pid` is alive. */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

/**
 * The process id a fixture wrote to `file`, once the file holds one (a positive integer above 1), waiting up
 * to `ms`. A file exists before its text is written, and `Number('')` is 0: `process.kill(0, 'SIGKILL')` kills
 * every process of this process group, the test runner and the shell that started it included.
 */
export async function readPid(file: string, ms = 20_000): Promise<number> {
  let pid = 0
  await until(() => {
    let text = ''
    try {
      text = readFileSync(file, 'utf8').trim()
    } catch {
      // not there yet
    }
    pid = /^\d+$/.test(text) ? Number(text) : 0
    return pid > 1
  }, ms)
  return pid
}

/**
 * SIGKILLs process `pid` if it is still the fixture server (its command line names it): once the fixture
 * ended, its pid may have gone to any other process.
 */
export function killFixture(pid: number): void {
  if (pid <= 1) return
  try {
    if (readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(fixture)) process.kill(pid, 'SIGKILL')
  } catch {
    // gone already
  }
}
