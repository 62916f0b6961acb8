import type { BindingTool } from '@ptc/bindings'
import {
  CheckError,
  checkProgramBounded,
  DEFAULT_CHECK_BOUNDS,
  type CheckErrorCode,
  type ToolCatalog,
} from '@ptc/bindings/check'
import { SEARCH_TOOLS, SEARCH_TOOLS_BINDING } from '@ptc/ptc'
import { MAX_TIMER_MS } from '@ptc/sandbox'
import { RUN_CODE, type ToolDefinition } from '@ptc/tools'
import { onePositional, parseCommandArgs, positiveInt } from '../args.js'
import { commandConfig, configuredService } from '../config/service.js'
import { escapeControl } from '../escape.js'
import { writeLine, writeMessage, type CliIo } from '../io.js'
import { readProgram } from '../program-file.js'

const { timeoutMs: DEFAULT_TIMEOUT_MS, maxMemoryMb: DEFAULT_MEMORY_MB } = DEFAULT_CHECK_BOUNDS

export const CHECK_USAGE = `ptc check FILE|- [--config FILE] [--tools MODULE] [--check-timeout MS] [--check-memory MB]
  Type-checks a program against the tools (--tools, else the config's, else the built-in demo shop) and
  search_tools without running it, and prints each error as FILE:LINE:COLUMN (control characters the
  program puts in a message are escaped: \\x1b). Any tool may be called, not only those a model was shown;
  only the tools the program names are rendered. Exit 1 when there are errors.
  --check-timeout MS  how long checking may take once the checker has started (default ${DEFAULT_TIMEOUT_MS})
  --check-memory MB   the checker's heap (default ${DEFAULT_MEMORY_MB}); it runs in a process of its own`

/** Why a check gave no result, for the user of the command: the flag to change, where there is one. */
const CHECK_ERRORS: Readonly<Record<CheckErrorCode, (error: CheckError) => string>> = {
  CHECK_TIMEOUT: (e) => `the type checker took longer than ${e.limit} ms (raise --check-timeout)`,
  CHECK_MEMORY: (e) => `the type checker needed more than ${e.limit} MB of memory (raise --check-memory)`,
  CHECK_STACK: () => 'Maximum call stack size exceeded (is it nested too deeply?)',
  CHECK_FAILED: (e) => e.message,
}

/**
 * The registered tools and the executor's `search_tools` (declared as the model reads it) as a catalog: each
 * tool's schemas are read only when the program names it.
 */
function catalogOf(definitions: readonly ToolDefinition[]): ToolCatalog {
  const own = definitions.filter((t) => t.name !== RUN_CODE && t.name !== SEARCH_TOOLS)
  const byName = new Map(own.map((t) => [t.name, t]))
  return {
    names: () => [...byName.keys(), SEARCH_TOOLS],
    tool: (name): BindingTool | undefined => {
      if (name === SEARCH_TOOLS) return SEARCH_TOOLS_BINDING
      const t = byName.get(name)
      return t && { name: t.name, description: t.description, parameters: t.parameters, output: t.output.schema }
    },
  }
}

/** `ptc check`: 0 when the program type-checks, 1 with its errors. */
export async function checkCommand(args: readonly string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseCommandArgs('check', args, {
    config: { type: 'string' },
    tools: { type: 'string' },
    'check-timeout': { type: 'string' },
    'check-memory': { type: 'string' },
  })
  const timeoutMs = positiveInt('check-timeout', values['check-timeout'], 'milliseconds', MAX_TIMER_MS)
  const maxMemoryMb = positiveInt('check-memory', values['check-memory'], 'megabytes', 2 ** 20)
  const program = await readProgram(onePositional('check', positionals, 'program file (or - for stdin)'), io)
  const config = await commandConfig(values.config, io.cwd)
  const { service } = await configuredService({ config, toolsModule: values.tools, cwd: io.cwd, fallback: 'demo' })
  const name = escapeControl(program.path === '-' ? '(stdin)' : program.path)
  let result: Awaited<ReturnType<typeof checkProgramBounded>>
  try {
    result = await checkProgramBounded(
      program.code,
      { catalog: catalogOf(service.definitions()) },
      {
        language: program.language,
        timeoutMs: timeoutMs ?? DEFAULT_TIMEOUT_MS,
        maxMemoryMb: maxMemoryMb ?? DEFAULT_MEMORY_MB,
      },
    )
  } catch (error) {
    if (!(error instanceof CheckError)) throw error
    writeMessage(io.stderr, `cannot type-check ${name}: ${escapeControl(CHECK_ERRORS[error.code](error))}`)
    return 1
  }
  if (result.ok) {
    writeLine(io.stdout, `${name}: no type errors`)
    return 0
  }
  for (const d of result.diagnostics) {
    const at = `${d.line}:${d.column}`
    const where = d.source === 'program' ? `${name}:${at}` : d.source === 'declarations' ? `(declarations):${at}` : name
    writeLine(io.stdout, `${where} - error TS${d.code}: ${d.message.replace(/\n/g, '\n    ')}`)
  }
  const count = result.diagnostics.length
  writeMessage(io.stderr, `${count} type error${count === 1 ? '' : 's'} in ${name}`, 'red')
  return 1
}
