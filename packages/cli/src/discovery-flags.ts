import { DEFAULT_DISCOVERY_BUDGET_CHARS, type DiscoveryOptions } from '@ptc/ptc'
import { positiveInt } from './args.js'
import type { PtcDiscoveryConfig } from './config/define.js'
import { CliError } from './errors.js'
import { suggestion } from './suggest.js'

/** The discovery options of `ptc run`, `ptc resume` and `ptc sdk` (for `parseCommandArgs`). */
export const DISCOVERY_OPTIONS = {
  'discovery-budget': { type: 'string' },
  'no-discovery': { type: 'boolean' },
  'always-load': { type: 'string', multiple: true },
} as const

export type DiscoveryFlagValues = {
  readonly 'discovery-budget'?: string | undefined
  readonly 'no-discovery'?: boolean | undefined
  readonly 'always-load'?: readonly string[] | undefined
}

const BUDGET = DEFAULT_DISCOVERY_BUDGET_CHARS

/** Their usage lines. */
export const DISCOVERY_USAGE = `  --discovery-budget CHARS
                          past this many characters of SDK text (guidance and declarations), the model reads
                          the always-loaded tools, an index of the catalog and the search_tools tool instead of
                          every declaration (default: the config's discovery.budgetChars, else ${BUDGET})
  --always-load NAME      a tool whose declaration the model always reads (repeatable; default: the config's
                          discovery.alwaysLoaded)
  --no-discovery          every declaration always, however many (the config's discovery: false)`

/** What the discovery flags ask for: off, or the settings they give (each absent when not given). */
export interface DiscoveryFlags {
  readonly off: boolean
  readonly budgetChars?: number
  readonly alwaysLoaded?: readonly string[]
}

/** The discovery flags checked: a usage error names the flag. */
export function discoveryFlags(values: DiscoveryFlagValues): DiscoveryFlags {
  const budgetChars = positiveInt('discovery-budget', values['discovery-budget'], 'characters')
  const always = values['always-load']
  const blank = always?.find((name) => name.trim() === '')
  if (blank !== undefined) throw new CliError('USAGE', `--always-load needs a tool name, not ${JSON.stringify(blank)}`)
  const off = values['no-discovery'] === true
  if (off && (budgetChars !== undefined || always !== undefined)) {
    throw new CliError(
      'USAGE',
      `--no-discovery turns discovery off; ${budgetChars !== undefined ? '--discovery-budget' : '--always-load'} ` +
        'goes with it on: give one or the other',
    )
  }
  return {
    off,
    ...(budgetChars !== undefined && { budgetChars }),
    ...(always !== undefined && { alwaysLoaded: [...always] }),
  }
}

/**
 * The `discovery` option of the executor: the flags over the config's (`--no-discovery` is off; a budget or
 * always-loaded tools turn it on, over a config's `false` too); undefined: neither says, the executor's default.
 */
export function discoveryOption(
  config: PtcDiscoveryConfig | undefined,
  flags: DiscoveryFlags,
): DiscoveryOptions | false | undefined {
  if (flags.off) return false
  if (flags.budgetChars === undefined && flags.alwaysLoaded === undefined)
    return config === false ? false : config === undefined ? undefined : { ...config }
  return {
    ...(config !== false && config),
    ...(flags.budgetChars !== undefined && { budgetChars: flags.budgetChars }),
    ...(flags.alwaysLoaded !== undefined && { alwaysLoaded: flags.alwaysLoaded }),
  }
}

/**
 * Checks that every always-loaded tool is one of `toolNames` (a misspelt one would silently be left out of what
 * the model reads): a usage error naming `--always-load`, or a config error naming `discovery.alwaysLoaded`.
 */
export function checkAlwaysLoaded(
  flags: DiscoveryFlags,
  config: { readonly discovery?: PtcDiscoveryConfig; readonly shown: string } | undefined,
  toolNames: readonly string[],
): void {
  const fromConfig = config?.discovery === false ? undefined : config?.discovery?.alwaysLoaded
  const [names, where] =
    flags.alwaysLoaded !== undefined
      ? [flags.alwaysLoaded, '--always-load']
      : [fromConfig ?? [], `config file ${config?.shown ?? ''}: discovery.alwaysLoaded`]
  const unknown = names.find((name) => !toolNames.includes(name))
  if (unknown === undefined) return
  const listed = toolNames.length <= 10 ? `; the tools are ${toolNames.join(', ')}` : ''
  const close = suggestion(unknown, toolNames) || listed
  const message = `${where} names ${JSON.stringify(unknown)}, which is not a tool${close}`
  throw new CliError(flags.alwaysLoaded !== undefined ? 'USAGE' : 'CONFIG', message)
}
