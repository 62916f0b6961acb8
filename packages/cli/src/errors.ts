import { pathToFileURL } from 'node:url'

/** Why the `ptc` command stopped before (or instead of) doing its job. Match on `code`. */
export type CliErrorCode =
  | 'USAGE' // an unknown command or option, a missing or malformed value
  | 'INPUT' // a program or log file that cannot be read
  | 'TOOLS_MODULE' // a tools module that is missing, throws on import or exports something that is not a tool
  | 'CONFIG' // a ptc.config file that is missing, ambiguous, fails to load, is malformed or whose setup throws
  | 'INIT' // ptc init into a folder that is not empty or cannot be written
  | 'SESSION' // a session file that cannot be opened
  | 'RESUME' // a suspended program that cannot be resumed (unknown, expired, taken or refused token)
  | 'BACKEND' // the requested sandbox backend cannot start here
  | 'LOG_FORMAT' // a log file that is not a JSON Lines session log
  | 'UNAVAILABLE' // a command that this install or location cannot run

const brand = Symbol.for('@ptc/cli.error')

/**
 * An error the command reports as one line on stderr, exiting with status 2 (never a stack trace).
 * A stable `code`, a `name` equal to the class name, `cause` when wrapping.
 */
export class CliError extends Error {
  readonly code: CliErrorCode
  readonly exitCode = 2 as const

  constructor(code: CliErrorCode, message: string, options?: ErrorOptions) {
    super(message, options)
    this.name = new.target.name
    this.code = code
  }
  get [brand](): true {
    return true
  }
}

// `instanceof CliError` reads the brand, so it works across module copies (a bundled and a source build); a
// subclass uses the ordinary prototype check. Never throws: a value whose traps throw (a hostile or revoked
// Proxy) is not an instance. Installed outside the class body: a bundler renames a class that names itself
// in its body, and every error's `name` became `_CliError`.
Object.defineProperty(CliError, Symbol.hasInstance, {
  value(this: unknown, value: unknown): boolean {
    try {
      if (this !== CliError) return Function.prototype[Symbol.hasInstance].call(this, value)
      return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[brand] === true
    } catch {
      return false
    }
  },
})

/** What the user's code threw, and the file it came from, for the `CliError`s that report it (`userCodeError`). */
const userThrows = new WeakMap<CliError, { readonly thrown: unknown; readonly file: UserFile }>()

/** The module a `userCodeError` is about: its absolute path and the name the user gave it. */
export interface UserFile {
  readonly path: string
  readonly shown: string
}

/**
 * A `CliError` reporting what a tools module or config threw (on import, in `setup`, when read): the command
 * names where in `file` it was thrown, and with `PTC_DEBUG=1` prints its stack.
 */
export function userCodeError(code: CliErrorCode, message: string, thrown: unknown, file: UserFile): CliError {
  const error = new CliError(code, message, { cause: thrown })
  userThrows.set(error, { thrown, file })
  return error
}

/**
 * The throw a `userCodeError` reports, as an error with a stack, and where in its file it was thrown
 * (`ptc.config.ts:12:7`, from the first frame of the stack in that file; undefined when none is). Total.
 */
export function userThrowOf(error: CliError): { readonly thrown: Error; readonly at: string | undefined } | undefined {
  try {
    const record = userThrows.get(error)
    const thrown = record?.thrown
    if (record === undefined || !(thrown instanceof Error) || typeof thrown.stack !== 'string') return undefined
    return { thrown, at: frameIn(thrown.stack, record.file) }
  } catch {
    return undefined
  }
}

/** `shown:line:column` of the first stack frame in `file` (a path or a file URL in the stack). */
function frameIn(stack: string, file: UserFile): string | undefined {
  for (const place of [file.path, pathToFileURL(file.path).href]) {
    const at = stack.indexOf(`${place}:`)
    if (at === -1) continue
    const position = /^:(\d+):(\d+)/.exec(stack.slice(at + place.length))
    if (position !== null) return `${file.shown}:${position[1]}:${position[2]}`
  }
  return undefined
}

/** The message of what was thrown, never throwing itself (a hostile `message` getter or `toString`). */
export function describeThrown(thrown: unknown): string {
  try {
    if (thrown instanceof Error) return typeof thrown.message === 'string' ? thrown.message : String(thrown.message)
    if (typeof thrown !== 'object' || thrown === null) return String(thrown)
    const message = (thrown as { message?: unknown }).message
    return typeof message === 'string' ? message : Object.prototype.toString.call(thrown)
  } catch {
    return 'unknown error'
  }
}

/** The first line of what was thrown, for a one-line message (escaped when printed, see `writeLine`). */
export function firstLine(thrown: unknown): string {
  const text = describeThrown(thrown)
  let name = 'unknown error'
  try {
    if (thrown instanceof Error && typeof thrown.name === 'string') name = thrown.name
  } catch {
    // a hostile `name` getter
  }
  return (text.split('\n')[0] ?? '').trim() || name
}
