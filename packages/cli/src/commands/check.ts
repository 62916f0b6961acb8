import { renderDeclarations } from '@ptc/bindings'
import { checkProgram } from '@ptc/bindings/check'
import { RUN_CODE } from '@ptc/tools'
import { onePositional, parseCommandArgs } from '../args.js'
import { commandConfig, configuredService } from '../config/service.js'
import { escapeControl } from '../escape.js'
import { firstLine } from '../errors.js'
import { writeLine, writeMessage, type CliIo } from '../io.js'
import { readProgram } from '../program-file.js'

export const CHECK_USAGE = `ptc check FILE|- [--config FILE] [--tools MODULE]
  Type-checks a program against the SDK declarations of the tools (--tools, else the config's,
  else the built-in demo shop) without running it, and prints each error as FILE:LINE:COLUMN
  (control characters the program puts in a message are escaped: \\x1b). Exit 1 when there are
  errors.`

/** `ptc check`: 0 when the program type-checks, 1 with its errors. */
export async function checkCommand(args: readonly string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseCommandArgs('check', args, { config: { type: 'string' }, tools: { type: 'string' } })
  const program = await readProgram(onePositional('check', positionals, 'program file (or - for stdin)'), io)
  const config = await commandConfig(values.config, io.cwd)
  const tools = (await configuredService({ config, toolsModule: values.tools, cwd: io.cwd, fallback: 'demo' })).service.definitions()
  const declarations = renderDeclarations(
    tools.filter((t) => t.name !== RUN_CODE).map((t) => ({ name: t.name, description: t.description, parameters: t.parameters, output: t.output.schema })),
  )
  const name = escapeControl(program.path === '-' ? '(stdin)' : program.path)
  let result: ReturnType<typeof checkProgram>
  try {
    result = checkProgram(program.code, declarations, { language: program.language })
  } catch (error) {
    // The TypeScript checker recurses: a program nested thousands of levels deep overflows its stack.
    if (!(error instanceof RangeError)) throw error
    writeMessage(io.stderr, `cannot type-check ${name}: ${firstLine(error)} (is it nested too deeply?)`)
    return 1
  }
  if (result.ok) {
    writeLine(io.stdout, `${name}: no type errors`)
    return 0
  }
  for (const d of result.diagnostics) {
    const where = d.source === 'program' ? `${name}:${d.line}:${d.column}` : d.source === 'declarations' ? `(declarations):${d.line}:${d.column}` : name
    writeLine(io.stdout, `${where} - error TS${d.code}: ${d.message.replace(/\n/g, '\n    ')}`)
  }
  const count = result.diagnostics.length
  writeMessage(io.stderr, `${count} type error${count === 1 ? '' : 's'} in ${name}`, 'red')
  return 1
}
