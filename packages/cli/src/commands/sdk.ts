import { sdkText } from '@ptc/ptc'
import { noPositional, parseCommandArgs } from '../args.js'
import { writeModelText, type CliIo } from '../io.js'
import { loadToolSet } from '../tools-module.js'

export const SDK_USAGE = `ptc sdk [--tools MODULE]
  Prints the prompt text a model is given with run_code: the guidance and the TypeScript
  declarations of every tool (default: the built-in demo shop). Byte-exact when piped; control
  characters are escaped (\\x1b) when stdout is a terminal.`

/** `ptc sdk`: the SDK prompt section, exactly as the PTC executor renders it. */
export async function sdkCommand(args: readonly string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseCommandArgs('sdk', args, { tools: { type: 'string' } })
  noPositional('sdk', positionals)
  const { tools } = await loadToolSet(values.tools, io.cwd)
  writeModelText(io.stdout, sdkText(tools))
  return 0
}
