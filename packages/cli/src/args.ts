import { parseArgs, type ParseArgsConfig } from 'node:util'
import { CliError } from './errors.js'
import { suggestion } from './suggest.js'

type Options = NonNullable<ParseArgsConfig['options']>

type Parsed<O extends Options> = ReturnType<
  typeof parseArgs<{ args: string[]; options: O; allowPositionals: true; strict: true }>
>

/**
 * `util.parseArgs` in strict mode: an unknown option, a missing value, a value given to a flag, or an option
 * given twice with different values (which one was meant? `--decision reject --decision allow` ran the call) is a
 * `CliError('USAGE')` pointing at the command's help (the message has no `ptc:` prefix: `main` adds the one prefix).
 */
export function parseCommandArgs<O extends Options>(command: string, args: readonly string[], options: O): Parsed<O> {
  let parsed: Parsed<O> & { tokens?: { kind: string; name?: string; value?: string | undefined }[] }
  try {
    parsed = parseArgs({
      args: [...args],
      options,
      allowPositionals: true,
      strict: true,
      tokens: true,
    }) as typeof parsed
  } catch (error) {
    const message = error instanceof Error ? (error.message.split('\n')[0] ?? '') : String(error)
    const unknown = /^Unknown option '--([^'=]+)'/.exec(message)?.[1]
    const close = unknown === undefined ? '' : suggestion(unknown, Object.keys(options)).replace(/"([^"]+)"/, '--$1')
    const head = message.replace(/\. To specify a positional argument.*$/, '')
    throw new CliError('USAGE', `${head}${close}; see \`ptc ${command} --help\``, { cause: error })
  }
  const seen = new Map<string, string | undefined>()
  for (const token of parsed.tokens ?? []) {
    if (token.kind !== 'option' || token.name === undefined || options[token.name]?.multiple === true) continue
    if (seen.has(token.name) && seen.get(token.name) !== token.value) {
      throw new CliError(
        'USAGE',
        `--${token.name} is given twice (${JSON.stringify(seen.get(token.name))}, then ` +
          `${JSON.stringify(token.value)}): give it once; see \`ptc ${command} --help\``,
      )
    }
    seen.set(token.name, token.value)
  }
  const { tokens: _tokens, ...values } = parsed
  return values as Parsed<O>
}

/** A positive integer option value of at most `max`, or a usage error saying what was expected. */
export function positiveInt(
  name: string,
  text: string | undefined,
  unit: string,
  max = Number.MAX_SAFE_INTEGER,
): number | undefined {
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
  if (positionals.length > 1)
    throw new CliError(
      'USAGE',
      `unexpected argument ${JSON.stringify(positionals[1])}; ptc ${command} takes one ${what}`,
    )
  return positionals[0] as string
}

/** No positional argument at all. */
export function noPositional(command: string, positionals: readonly string[]): void {
  if (positionals.length > 0)
    throw new CliError('USAGE', `unexpected argument ${JSON.stringify(positionals[0])}; ptc ${command} takes none`)
}

/** One of the allowed values of an option. */
export function oneOf<T extends string>(name: string, text: string | undefined, allowed: readonly T[]): T | undefined {
  if (text === undefined) return undefined
  if (!(allowed as readonly string[]).includes(text)) {
    throw new CliError('USAGE', `--${name} must be one of ${allowed.join(', ')}, not ${JSON.stringify(text)}`)
  }
  return text as T
}
