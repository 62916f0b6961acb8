/** Why the `ptc` command stopped before (or instead of) doing its job. Match on `code`. */
export type CliErrorCode =
  | 'USAGE' // an unknown command or option, a missing or malformed value
  | 'INPUT' // a program or log file that cannot be read
  | 'TOOLS_MODULE' // a tools module that is missing, throws on import or exports something that is not a tool
  | 'SESSION' // a session file that cannot be opened
  | 'BACKEND' // the requested sandbox backend cannot start here
  | 'LOG_FORMAT' // a log file that is not a JSON Lines session log
  | 'UNAVAILABLE' // a command that this install or location cannot run

/** An error the command reports as one line on stderr, exiting with status 2 (never a stack trace). */
export class CliError extends Error {
  readonly code: CliErrorCode
  readonly exitCode = 2 as const

  constructor(code: CliErrorCode, message: string, options?: ErrorOptions) {
    super(message, options)
    this.name = 'CliError'
    this.code = code
  }
}

/** The first line of what was thrown, for a one-line message. */
export function firstLine(thrown: unknown): string {
  const text = thrown instanceof Error ? thrown.message : String(thrown)
  return (text.split('\n')[0] ?? '').trim() || (thrown instanceof Error ? thrown.name : 'unknown error')
}
