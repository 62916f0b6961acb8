import { sdkText } from '@ptc/ptc'
import { noPositional, parseCommandArgs } from '../args.js'
import { commandConfig, configuredService } from '../config/service.js'
import {
  checkAlwaysLoaded,
  DISCOVERY_OPTIONS,
  DISCOVERY_USAGE,
  discoveryFlags,
  discoveryOption,
} from '../discovery-flags.js'
import { writeModelText, type CliIo } from '../io.js'

export const SDK_USAGE = `ptc sdk [--config FILE] [--tools MODULE] [discovery options]
  Prints the prompt text a model is given with run_code: the guidance and the TypeScript
  declarations of every tool (--tools, else the config's, else the built-in demo shop); past the
  discovery budget, the always-loaded declarations and the index of the catalog, as ptc run gives them.
  Byte-exact when piped; control characters are escaped (\\x1b) when stdout is a terminal.
${DISCOVERY_USAGE}`

const OPTIONS = { config: { type: 'string' }, tools: { type: 'string' }, ...DISCOVERY_OPTIONS } as const

/** `ptc sdk`: the SDK prompt section, exactly as the PTC executor renders it. */
export async function sdkCommand(args: readonly string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseCommandArgs('sdk', args, OPTIONS)
  noPositional('sdk', positionals)
  const flags = discoveryFlags(values)
  const config = await commandConfig(values.config, io.cwd)
  const tools = (
    await configuredService({ config, toolsModule: values.tools, cwd: io.cwd, fallback: 'demo' })
  ).service.definitions()
  // The executor's default is discovery on; sdkText's is off: say it, so the text is the one a run gives.
  const discovery = discoveryOption(config?.config.discovery, flags) ?? {}
  if (discovery !== false) {
    checkAlwaysLoaded(
      flags,
      config && { ...config.config, shown: config.shown },
      tools.map((t) => t.name),
    )
  }
  writeModelText(io.stdout, sdkText(tools, { discovery }))
  return 0
}
