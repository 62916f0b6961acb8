import { sdkText } from '@ptc/ptc'
import { noPositional, parseCommandArgs } from '../args.js'
import { commandConfig, configuredService } from '../config/service.js'
import { writeModelText, type CliIo } from '../io.js'

export const SDK_USAGE = `ptc sdk [--config FILE] [--tools MODULE]
  Prints the prompt text a model is given with run_code: the guidance and the TypeScript
  declarations of every tool (--tools, else the config's, else the built-in demo shop).
  Byte-exact when piped; control characters are escaped (\\x1b) when stdout is a terminal.`

/** `ptc sdk`: the SDK prompt section, exactly as the PTC executor renders it. */
export async function sdkCommand(args: readonly string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseCommandArgs('sdk', args, { config: { type: 'string' }, tools: { type: 'string' } })
  noPositional('sdk', positionals)
  const config = await commandConfig(values.config, io.cwd)
  const tools = (await configuredService({ config, toolsModule: values.tools, cwd: io.cwd, fallback: 'demo' })).service.definitions()
  writeModelText(io.stdout, sdkText(tools))
  return 0
}
