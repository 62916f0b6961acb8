/** The shapes `checkProgram` takes and gives, shared by its parts. */

/** Options of {@link checkProgram}. */
export interface CheckProgramOptions {
  /** `'typescript'` (default) or `'javascript'` (checked as JS with `checkJs`). */
  readonly language?: 'typescript' | 'javascript'
}

/** One problem, positioned in the model's own code (1-based). */
export interface ProgramDiagnostic {
  /** 1-based line in the model's code (0 when the problem has no position). */
  readonly line: number
  /** 1-based column (UTF-16 code units) in that line (0 when there is no position). */
  readonly column: number
  readonly message: string
  /** The TypeScript diagnostic code, e.g. 2345 (argument type), 2304 (unknown name). */
  readonly code: number
  /** Where it was found: the model's code, the SDK declarations, or no file. */
  readonly source: 'program' | 'declarations' | 'global'
}

/** The outcome of {@link checkProgram}: `ok` when there are no diagnostics. */
export interface CheckProgramResult {
  readonly ok: boolean
  readonly diagnostics: readonly ProgramDiagnostic[]
}
