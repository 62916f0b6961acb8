import { ToolsService, type ApprovalService } from '@ptc/tools'
import { CliError, firstLine, userCodeError } from '../errors.js'
import { demoToolSet, loadToolSet, type ToolSet } from '../tools-module.js'
import { findConfigFile, loadConfig, type LoadedConfig } from './load.js'

/** The config a command reads: `--config FILE`, else the working directory's `ptc.config.*`, else none. */
export async function commandConfig(explicit: string | undefined, cwd: string): Promise<LoadedConfig | undefined> {
  const file = findConfigFile(explicit, cwd)
  return file === undefined ? undefined : loadConfig(file)
}

export interface ServiceOptions {
  readonly config: LoadedConfig | undefined
  /** `--tools MODULE`: replaces the config's tools (its setup, approval, limits and sandbox still apply). */
  readonly toolsModule: string | undefined
  readonly cwd: string
  readonly approval?: ApprovalService | undefined
  /** The tools when neither `--tools` nor the config gives some: the built-in demo shop (with its policy), or none. */
  readonly fallback: 'demo' | 'none'
}

export interface ConfiguredService {
  readonly service: ToolsService
  /** Where the tools came from (`built-in demo (shop)`, the module's or the config's path); undefined: no tools. */
  readonly label: string | undefined
  /** The tools are the built-in demo shop's. */
  readonly demo: boolean
}

/**
 * A registry with the command's tools (`--tools`, else the config's, else the
 * fallback), the demo's policy when those are the demo's, then the config's
 * `setup`. A tool that cannot be registered or a setup that throws is a
 * `CliError` naming the file.
 */
export async function configuredService(options: ServiceOptions): Promise<ConfiguredService> {
  const { config } = options
  const fromConfig = options.toolsModule === undefined && config?.config.tools !== undefined
  const toolSet: ToolSet | undefined =
    options.toolsModule !== undefined
      ? await loadToolSet(options.toolsModule, options.cwd)
      : config?.config.tools !== undefined
        ? { label: config.shown, tools: config.config.tools }
        : options.fallback === 'demo'
          ? demoToolSet()
          : undefined
  const service = new ToolsService(options.approval === undefined ? {} : { approval: options.approval })
  for (const tool of toolSet?.tools ?? []) {
    try {
      service.register(tool)
    } catch (error) {
      const where = fromConfig ? `config file ${toolSet?.label ?? ''}` : `tools module ${toolSet?.label ?? ''}`
      throw new CliError(
        fromConfig ? 'CONFIG' : 'TOOLS_MODULE',
        `${where}: tool ${JSON.stringify(tool.name)} cannot be registered: ${firstLine(error)}`,
        { cause: error },
      )
    }
  }
  toolSet?.install?.(service)
  const setup = config?.config.setup
  if (config !== undefined && setup !== undefined) {
    try {
      await setup(service)
    } catch (error) {
      throw userCodeError('CONFIG', `config file ${config.shown}: setup failed: ${firstLine(error)}`, error, config)
    }
  }
  const demo = options.toolsModule === undefined && config?.config.tools === undefined && options.fallback === 'demo'
  return { service, label: toolSet?.label, demo }
}
