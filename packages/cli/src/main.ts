import { readFileSync } from 'node:fs'
import { benchCommand, BENCH_USAGE } from './commands/bench.js'
import { checkCommand, CHECK_USAGE } from './commands/check.js'
import { initCommand, INIT_USAGE } from './commands/init.js'
import { logCommand, LOG_USAGE } from './commands/log.js'
import { resumeCommand, RESUME_USAGE } from './commands/resume.js'
import { runCommand, RUN_USAGE } from './commands/run.js'
import { sdkCommand, SDK_USAGE } from './commands/sdk.js'
import { serveCommand } from './commands/serve.js'
import { safeJson } from './escape.js'
import { CliError, firstLine, userThrowOf } from './errors.js'
import { writeLine, writeMessage, type CliIo } from './io.js'

const SERVE_USAGE = `ptc serve [--config FILE] [--upstream "[name=]command [args…]"]… [options]
  Exposes run_code over MCP: one tool whose programs call the config's tools and the tools of every
  upstream MCP server, with the config's setup, approval, limits and sandbox as ptc run reads them
  (from @ptc/mcp; \`ptc serve --help\` lists its options and their defaults).`

const HELP_USAGE = `ptc help [COMMAND]   (or ptc COMMAND --help, -h)
  Prints this text, or one command's usage with its defaults. ptc --version (-v) prints the version.`

const EXIT_STATUS =
  'Exit status: 0 success, 1 the program (or check, or a benchmark) failed, 2 bad usage or input, 3 the program ' +
  'waits\nfor an approval (ptc run --approve defer; go on with ptc resume).'

export const USAGE = `ptc — run model-style programs against tools in a sandbox (Programmatic Tool Calling)

${RUN_USAGE}

${RESUME_USAGE}

${SDK_USAGE}

${CHECK_USAGE}

${LOG_USAGE}

${BENCH_USAGE}

${SERVE_USAGE}

${INIT_USAGE}

${HELP_USAGE}

${EXIT_STATUS}`

type Command = (args: readonly string[], io: CliIo) => Promise<number>

const COMMANDS: Readonly<Record<string, Command>> = {
  run: runCommand,
  resume: resumeCommand,
  sdk: sdkCommand,
  check: checkCommand,
  log: logCommand,
  bench: benchCommand,
  serve: serveCommand,
  init: initCommand,
}

/**
 * The `ptc` command: runs `argv` (without node and the script) and returns the
 * exit status. Every expected failure is one line on stderr, never a stack.
 */
export async function main(argv: readonly string[], io: CliIo): Promise<number> {
  const [first, ...more] = argv
  if (first === undefined) {
    writeLine(io.stderr, USAGE)
    return 2
  }
  if ((first === 'help' && more.length === 0) || first === '--help' || first === '-h') {
    writeLine(io.stdout, USAGE)
    return 0
  }
  if (first === '--version' || first === '-v') return version(io)
  // `ptc help COMMAND` is `ptc COMMAND --help`.
  const [name, rest] = first === 'help' ? [more[0] as string, ['--help']] : [first, more]
  const command = Object.hasOwn(COMMANDS, name) ? COMMANDS[name] : undefined
  if (command === undefined) {
    writeMessage(
      io.stderr,
      `unknown command ${safeJson(name)}; one of ${Object.keys(COMMANDS).join(', ')} (see \`ptc help\`)`,
    )
    return 2
  }
  // `ptc serve` answers --help itself (its usage shows the limits it would run with).
  if (name !== 'serve' && asksForHelp(rest)) {
    writeLine(io.stdout, usageOf(name))
    return 0
  }
  try {
    return await command(rest, io)
  } catch (error) {
    if (error instanceof CliError) {
      const user = userThrowOf(error)
      const debug = process.env['PTC_DEBUG'] === '1'
      const notes: string[] = []
      if (user?.at !== undefined) notes.push(`thrown at ${user.at}`)
      if (user !== undefined && !debug) notes.push('set PTC_DEBUG=1 for its stack')
      const hint = notes.length === 0 ? '' : ` (${notes.join('; ')})`
      writeMessage(io.stderr, `${error.message}${hint}`, 'red')
      if (user !== undefined && debug) writeLine(io.stderr, stackOf(user.thrown))
      return error.exitCode
    }
    writeMessage(io.stderr, `internal error in ptc ${name}: ${firstLine(error)} (set PTC_DEBUG=1 for the stack)`, 'red')
    if (process.env['PTC_DEBUG'] === '1') writeLine(io.stderr, stackOf(error))
    return 1
  }
}

/** `--help` or `-h` among the options (not after `--`, where it would be an argument). */
function asksForHelp(args: readonly string[]): boolean {
  const end = args.indexOf('--')
  return (end === -1 ? args : args.slice(0, end)).some((arg) => arg === '--help' || arg === '-h')
}

/** The block of `USAGE` about one command, and the exit statuses. */
function usageOf(name: string): string {
  const block = USAGE.split('\n\n').find((b) => b.startsWith(`ptc ${name} `) || b.startsWith(`ptc ${name}\n`))
  return block === undefined ? USAGE : `${block}\n\n${EXIT_STATUS}`
}

/** `ptc --version`: the version in @ptc/cli's package.json (one folder up from `src/` and from `dist/`). */
function version(io: CliIo): number {
  let text: unknown
  try {
    text = (JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version?: unknown })
      .version
  } catch (error) {
    writeMessage(io.stderr, `cannot read the version from @ptc/cli's package.json: ${firstLine(error)}`)
    return 1
  }
  if (typeof text !== 'string') {
    writeMessage(io.stderr, `@ptc/cli's package.json has no version`)
    return 1
  }
  writeLine(io.stdout, text)
  return 0
}

function stackOf(error: unknown): string {
  try {
    return error instanceof Error && typeof error.stack === 'string' ? error.stack : '(no stack)'
  } catch {
    return '(no stack)'
  }
}
