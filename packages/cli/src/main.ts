import { benchCommand, BENCH_USAGE } from './commands/bench.js'
import { checkCommand, CHECK_USAGE } from './commands/check.js'
import { initCommand, INIT_USAGE } from './commands/init.js'
import { logCommand, LOG_USAGE } from './commands/log.js'
import { runCommand, RUN_USAGE } from './commands/run.js'
import { sdkCommand, SDK_USAGE } from './commands/sdk.js'
import { serveCommand } from './commands/serve.js'
import { escapeControl, safeJson } from './escape.js'
import { CliError, firstLine } from './errors.js'
import { writeLine, type CliIo } from './io.js'

const SERVE_USAGE = `ptc serve [--config FILE] …
  Exposes run_code over MCP (from @ptc/mcp; see \`ptc serve --help\`), with the tools, setup,
  approval, limits and sandbox of the config (as ptc run reads it).`

export const USAGE = `ptc — run model-style programs against tools in a sandbox (Programmatic Tool Calling)

${RUN_USAGE}

${SDK_USAGE}

${CHECK_USAGE}

${LOG_USAGE}

${BENCH_USAGE}

${SERVE_USAGE}

${INIT_USAGE}

Exit status: 0 success, 1 the program (or check, or a benchmark) failed, 2 bad usage or input.`

type Command = (args: readonly string[], io: CliIo) => Promise<number>

const COMMANDS: Readonly<Record<string, Command>> = {
  run: runCommand,
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
  const [name, ...rest] = argv
  if (name === undefined || name === 'help' || name === '--help' || name === '-h') {
    writeLine(name === undefined ? io.stderr : io.stdout, USAGE)
    return name === undefined ? 2 : 0
  }
  if (name === '--version' || name === '-v') {
    writeLine(io.stdout, '0.1.0')
    return 0
  }
  const command = Object.hasOwn(COMMANDS, name) ? COMMANDS[name] : undefined
  if (command === undefined) {
    writeLine(io.stderr, `ptc: unknown command ${safeJson(name)}; one of ${Object.keys(COMMANDS).join(', ')} (see \`ptc help\`)`)
    return 2
  }
  if (name !== 'serve' && (rest.includes('--help') || rest.includes('-h'))) {
    writeLine(io.stdout, USAGE.split('\n\n').find((block) => block.startsWith(`ptc ${name}`)) ?? USAGE)
    return 0
  }
  try {
    return await command(rest, io)
  } catch (error) {
    if (error instanceof CliError) {
      writeLine(io.stderr, escapeControl(`ptc: ${error.message}`))
      return error.exitCode
    }
    writeLine(io.stderr, escapeControl(`ptc ${name}: internal error: ${firstLine(error)} (set PTC_DEBUG=1 for the stack)`))
    if (process.env['PTC_DEBUG'] === '1') writeLine(io.stderr, stackOf(error))
    return 1
  }
}

function stackOf(error: unknown): string {
  try {
    return error instanceof Error && typeof error.stack === 'string' ? error.stack : '(no stack)'
  } catch {
    return '(no stack)'
  }
}
