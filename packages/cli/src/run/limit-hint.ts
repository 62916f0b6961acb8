import type { CodeRunLimits } from '@ptc/sandbox'

/** Where a run's limit came from: a flag, the config file, or the CLI's default. */
export type LimitSource =
  | { readonly kind: 'flag' }
  | { readonly kind: 'config'; readonly file: string }
  | { readonly kind: 'default' }

/** The source of each limit, as `mergeLimits` layers them: the flags over the config, the config over the defaults. */
export function limitSources(
  config: { readonly limits?: Partial<CodeRunLimits> | undefined; readonly shown: string } | undefined,
  flags: Partial<CodeRunLimits> | undefined,
): (key: keyof CodeRunLimits) => LimitSource {
  return (key) => {
    if (flags?.[key] !== undefined) return { kind: 'flag' }
    if (config?.limits?.[key] !== undefined) return { kind: 'config', file: config.shown }
    return { kind: 'default' }
  }
}

/** A limit the user can set: its words, its flag (with the flag's unit) and how its value is shown. */
interface Setting {
  readonly key: keyof CodeRunLimits
  readonly what: string
  readonly flag?: string
  readonly show: (value: number) => string
}

const ms = (value: number): string => `${value} ms`
const bytes = (value: number): string => `${value} bytes`

/** The limit a failure of the sandbox says was reached (the wording of `@ptc/sandbox`'s stop messages), if any. */
function settingOf(error: { readonly kind: string; readonly message: string }): Setting | undefined {
  const { kind, message } = error
  if (kind === 'timeout' && message.startsWith('CPU time limit'))
    return { key: 'cpuMs', what: 'CPU time limit', flag: '--cpu MS', show: ms }
  if (kind === 'timeout' && message.startsWith('wall-clock limit'))
    return { key: 'wallMs', what: 'wall-clock limit', flag: '--wall MS', show: ms }
  if (kind === 'output-limit')
    return { key: 'maxOutputBytes', what: 'output limit', flag: '--max-output BYTES', show: bytes }
  if (kind === 'memory' || (kind === 'limit' && message.includes('memory limit'))) {
    return { key: 'memoryBytes', what: 'memory limit', flag: '--memory MB', show: (v) => `${v / 1024 / 1024} MiB` }
  }
  if (kind === 'limit' && message.startsWith('sub-call limit'))
    return { key: 'maxSubCalls', what: 'sub-call limit', flag: '--max-sub-calls N', show: (v) => `${v} calls` }
  if (kind === 'limit' && message.startsWith('pending sub-call limit')) {
    return { key: 'maxPendingSubCalls', what: 'pending sub-call limit', show: (v) => `${v} calls` }
  }
  return undefined
}

/**
 * For a run stopped at one of its limits: which setting it was, where its value came from, and how to raise it
 * (`the run stopped at its CPU time limit of 5000 ms, set by limits.cpuMs in ptc.config.ts: …`). Undefined for
 * any other failure.
 */
export function limitHint(
  error: { readonly kind: string; readonly message: string },
  limits: Readonly<CodeRunLimits>,
  source: (key: keyof CodeRunLimits) => LimitSource,
): string | undefined {
  const setting = settingOf(error)
  if (setting === undefined) return undefined
  const configKey = `limits.${setting.key}`
  const from = source(setting.key)
  const head = `the run stopped at its ${setting.what} of ${setting.show(limits[setting.key])}`
  const flag = setting.flag === undefined ? '' : ` or with ${setting.flag}`
  switch (from.kind) {
    case 'flag':
      return `${head}, set on the command line: raise it with ${setting.flag ?? configKey}, if the program needs more`
    case 'config':
      return `${head}, set by ${configKey} in ${from.file}: raise it there${flag} (a flag wins over the config)`
    case 'default':
      return `${head} (the CLI's default): raise it with ${configKey} in the config${flag}`
  }
}
