import { existsSync, readFileSync, statSync } from 'node:fs'
import { extname, join, resolve } from 'node:path'
import { CliError, describeThrown, firstLine, userCodeError } from '../errors.js'
import { checkModuleFile, importModuleFile, MAX_TOOLS_MODULE_BYTES } from '../tools-module.js'
import type { PtcConfig, PtcDiscoveryConfig } from './define.js'
import { configViolations } from './validate.js'

/** The files a command finds in its working directory, in this order of preference (only one may exist). */
export const CONFIG_FILE_NAMES = ['ptc.config.ts', 'ptc.config.mts', 'ptc.config.js', 'ptc.config.mjs'] as const
const CONFIG_EXTENSIONS = new Set(['.ts', '.mts', '.cts', '.js', '.mjs', '.cjs'])

/** Where a config comes from: the path as the user gave it (or the file's name, when found) and the absolute path. */
export interface ConfigFile {
  readonly shown: string
  readonly path: string
}

/** A config that loaded and validated. */
export interface LoadedConfig extends ConfigFile {
  readonly config: PtcConfig
}

/**
 * The config file a command reads: `--config FILE` when given, else the one
 * `ptc.config.{ts,mts,js,mjs}` in `cwd`, else none. More than one there is a
 * `CliError('CONFIG')` naming them. Synchronous: the binary looks before it
 * decides to restart node (`configSandboxHint`).
 */
export function findConfigFile(explicit: string | undefined, cwd: string): ConfigFile | undefined {
  if (explicit !== undefined) {
    if (explicit === '') throw new CliError('USAGE', '--config needs a file name')
    return { shown: explicit, path: resolve(cwd, explicit) }
  }
  const found = CONFIG_FILE_NAMES.filter((name) => existsSync(join(cwd, name)))
  if (found.length > 1) {
    const names = `${found.slice(0, -1).join(', ')} and ${found.at(-1) ?? ''}`
    throw new CliError(
      'CONFIG',
      `${found.length} config files in ${cwd}: ${names}; keep one, or choose one with --config FILE`,
    )
  }
  const name = found[0]
  return name === undefined ? undefined : { shown: name, path: join(cwd, name) }
}

/**
 * Imports and validates a config file (`.ts` and `.mts` through tsx, as tools
 * modules load). It must be a regular file of at most 16 MiB whose default
 * export is a `PtcConfig`. Every problem is one `CliError('CONFIG')` line
 * naming the file.
 */
export async function loadConfig(file: ConfigFile): Promise<LoadedConfig> {
  const { shown, path } = file
  if (!CONFIG_EXTENSIONS.has(extname(path).toLowerCase())) {
    throw new CliError(
      'CONFIG',
      `config file ${shown} is not a JavaScript or TypeScript module; name it ptc.config.ts, .mts, .js or .mjs`,
    )
  }
  await checkModuleFile({ what: 'config file', shown, path, code: 'CONFIG' })
  let namespace: Record<string, unknown>
  try {
    namespace = await importModuleFile(path, 'config file', 'CONFIG')
  } catch (error) {
    if (error instanceof CliError) throw error
    const why = `${loadError(error)}${commonJsHint(path, error)}`
    throw userCodeError('CONFIG', `config file ${shown} failed to load: ${why}`, error, file)
  }
  let value: unknown
  try {
    if (!Object.hasOwn(namespace, 'default'))
      throw new CliError(
        'CONFIG',
        `config file ${shown} has no default export; write export default defineConfig({ … })`,
      )
    value = namespace['default']
  } catch (error) {
    if (error instanceof CliError) throw error
    throw userCodeError('CONFIG', `config file ${shown}: its exports cannot be read: ${firstLine(error)}`, error, file)
  }
  const violations = configViolations(value)
  const first = violations[0]
  if (first !== undefined) {
    const more =
      violations.length > 1 ? ` (and ${violations.length - 1} more problem${violations.length === 2 ? '' : 's'})` : ''
    throw new CliError('CONFIG', `config file ${shown}: ${first.message}${more}`)
  }
  return { shown, path, config: copyOf(value as PtcConfig) }
}

/** The config's keys read once (a getter is not asked again later). */
function copyOf(config: PtcConfig): PtcConfig {
  const { tools, setup, approval, limits, sandbox, discovery } = config
  return {
    ...(tools !== undefined && { tools: [...tools] }),
    ...(setup !== undefined && { setup }),
    ...(approval !== undefined && { approval }),
    ...(limits !== undefined && { limits: { ...limits } }),
    ...(sandbox !== undefined && { sandbox }),
    ...(discovery !== undefined && { discovery: discoveryCopy(discovery) }),
  }
}

/** A config's discovery, its keys read once. */
function discoveryCopy(discovery: PtcDiscoveryConfig): PtcDiscoveryConfig {
  if (discovery === false) return false
  const { budgetChars, alwaysLoaded } = discovery
  return {
    ...(budgetChars !== undefined && { budgetChars }),
    ...(alwaysLoaded !== undefined && { alwaysLoaded: [...alwaysLoaded] }),
  }
}

/**
 * Splits `--config FILE` (or `--config=FILE`) off a command line that is not
 * parsed here (`ptc serve`'s, handed to @ptc/mcp; the binary's first look).
 * A `--config` without a file is a `CliError('USAGE')`; the last one wins.
 */
export function splitConfigOption(args: readonly string[]): { config: string | undefined; rest: string[] } {
  let config: string | undefined
  const rest: string[] = []
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] as string
    if (arg === '--') {
      rest.push(...args.slice(i))
      break
    }
    if (arg.startsWith('--config=')) config = arg.slice('--config='.length)
    else if (arg === '--config') {
      const value = args[i + 1]
      if (value === undefined || value.startsWith('-'))
        throw new CliError('USAGE', '--config needs a file name: --config FILE')
      config = value
      i++
    } else rest.push(arg)
  }
  if (config === '') throw new CliError('USAGE', '--config needs a file name: --config FILE')
  return { config, rest }
}

/**
 * Whether the config a command would read chooses the isolated-vm sandbox,
 * judged from its text (`sandbox: 'isolated-vm'`): the binary needs to know
 * before anything is imported, to restart node with `--no-node-snapshot`.
 * False when there is none or it cannot be read; a wrong guess costs one
 * restart of node, or the backend's error naming the flag.
 */
export function configChoosesIsolatedVm(explicit: string | undefined, cwd: string): boolean {
  try {
    const file = findConfigFile(explicit, cwd)
    if (file === undefined) return false
    const info = statSync(file.path)
    return (
      info.isFile() &&
      info.size <= MAX_TOOLS_MODULE_BYTES &&
      /\bsandbox\s*:\s*['"`]isolated-vm['"`]/.test(readFileSync(file.path, 'utf8'))
    )
  } catch {
    return false
  }
}

/**
 * The first line of an import's error, with the line after it when it ends in `:` (tsx: `Transform failed with 1
 * error:`).
 */
function loadError(error: unknown): string {
  const first = firstLine(error)
  if (!first.endsWith(':')) return first
  const next = describeThrown(error)
    .split('\n')
    .map((line) => line.trim())
    .find((line, i) => i > 0 && line !== '')
  return next === undefined ? first : `${first} ${next}`
}

/**
 * A `.ts` file in a folder whose package.json does not say `"type": "module"`
 * loads as CommonJS, and `require('@ptc/cli')` finds no export: say how to fix it.
 */
function commonJsHint(path: string, error: unknown): string {
  if (extname(path).toLowerCase() !== '.ts') return ''
  let code: unknown
  try {
    code = (error as { code?: unknown } | null)?.code
  } catch {
    return '' // a hostile throw: a revoked proxy, a throwing `code` getter
  }
  if (code !== 'ERR_PACKAGE_PATH_NOT_EXPORTED' && code !== 'ERR_REQUIRE_ESM') return ''
  return ' (it was loaded as CommonJS: add "type": "module" to the package.json, or name it ptc.config.mts)'
}
