import { parseArgs, type ParseArgsConfig } from 'node:util'
import { CliError } from './errors.js'

type Options = NonNullable<ParseArgsConfig['options']>

/**
 * `util.parseArgs` in strict mode: an unknown option, a missing value or a
 * value given to a flag is a `CliError('USAGE')` pointing at the command's help
 * (the message has no `ptc:` prefix: `main` adds the one prefix).
 */
type Parsed<O extends Options> = ReturnType<typeof parseArgs<{ args: string[]; options: O; allowPositionals: true; strict: true }>>

export function parseCommandArgs<O extends Options>(command: string, args: readonly string[], options: O): Parsed<O> {
  try {
    return parseArgs({ args: [...args], options, allowPositionals: true, strict: true })
  } catch (error) {
    const message = error instanceof Error ? error.message.split('\n')[0] ?? '' : String(error)
    throw new CliError('USAGE', `${message.replace(/\. To specify a positional argument.*$/, '')}; see \`ptc ${command} --help\``, { cause: error })
  }
}

/** A positive integer option value of at most `max`, or a usage error saying what was expected. */
export function positiveInt(name: string, text: string | undefined, unit: string, max = Number.MAX_SAFE_INTEGER): number | undefined {
  if (text === undefined) return undefined
  const value = /^\d+$/.test(text.trim()) ? Number(text) : Number.NaN
  if (!Number.isSafeInteger(value) || value <= 0) {
    throw new CliError('USAGE', `--${name} must be a positive whole number of ${unit}, not ${JSON.stringify(text)}`)
  }
  if (value > max) throw new CliError('USAGE', `--${name} must be at most ${max} ${unit}, not ${text.trim()}`)
  return value
}

/** Exactly one positional argument (a file). */
export function onePositional(command: string, positionals: readonly string[], what: string): string {
  if (positionals.length === 0) throw new CliError('USAGE', `missing ${what}; see \`ptc ${command} --help\``)
  if (positionals.length > 1) throw new CliError('USAGE', `unexpected argument ${JSON.stringify(positionals[1])}; ptc ${command} takes one ${what}`)
  return positionals[0] as string
}

/** No positional argument at all. */
export function noPositional(command: string, positionals: readonly string[]): void {
  if (positionals.length > 0) throw new CliError('USAGE', `unexpected argument ${JSON.stringify(positionals[0])}; ptc ${command} takes none`)
}

/** One of the allowed values of an option. */
export function oneOf<T extends string>(name: string, text: string | undefined, allowed: readonly T[]): T | undefined {
  if (text === undefined) return undefined
  if (!(allowed as readonly string[]).includes(text)) {
    throw new CliError('USAGE', `--${name} must be one of ${allowed.join(', ')}, not ${JSON.stringify(text)}`)
  }
  return text as T
}
