import type * as TS from 'typescript'
import { _createHost, _ROOT, _SDK_FILE } from './host.js'
import { _typescript } from './typescript.js'

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

/** The line before the model's code; the code starts on line 2 of the checked file. */
export const PROGRAM_PREFIX = 'async function __ptc_program__() {\n'
const PROGRAM_SUFFIX = '\n}\n'

function compilerOptions(ts: typeof TS, javascript: boolean): TS.CompilerOptions {
  return {
    target: ts.ScriptTarget.ES2022,
    lib: ['lib.es2023.d.ts'],
    types: [],
    strict: true,
    exactOptionalPropertyTypes: true,
    noEmit: true,
    skipDefaultLibCheck: true,
    allowJs: javascript,
    checkJs: javascript,
    noResolve: true,
    moduleDetection: ts.ModuleDetectionKind.Legacy,
  }
}

/** TypeScript's install hints (`@types/node`, `lib: dom`) would mislead a model: the sandbox has no host. */
const HOST_HINT = /^Cannot find name '([^']*)'\. (?:Do you need|Try) .*$/s

function toDiagnostic(ts: typeof TS, d: TS.Diagnostic, programFile: string, codeLines: readonly string[]): ProgramDiagnostic {
  const message = ts
    .flattenDiagnosticMessageText(d.messageText, '\n')
    .replace(HOST_HINT, "Cannot find name '$1'. Programs have only ECMAScript built-ins, tools, ToolCallError and console.")
  if (d.file === undefined || d.start === undefined) return { line: 0, column: 0, message, code: d.code, source: 'global' }
  const at = d.file.getLineAndCharacterOfPosition(d.start)
  if (d.file.fileName !== programFile) {
    return { line: at.line + 1, column: at.character + 1, message, code: d.code, source: d.file.fileName === _SDK_FILE ? 'declarations' : 'global' }
  }
  // File line 0 is the prefix; the model's line n (1-based) is file line n. Positions in the
  // wrapper (an unclosed brace reported at the suffix) clamp to the model's code.
  const last = Math.max(1, codeLines.length)
  if (at.line < 1) return { line: 1, column: 1, message, code: d.code, source: 'program' }
  if (at.line > last) return { line: last, column: (codeLines[last - 1]?.length ?? 0) + 1, message, code: d.code, source: 'program' }
  return { line: at.line, column: at.character + 1, message, code: d.code, source: 'program' }
}

/**
 * Type-checks a model program against SDK declarations (from `renderDeclarations`) with the
 * TypeScript compiler API: `code` is the body of an async function (top-level `await` and
 * `return` work), checked in strict mode with `exactOptionalPropertyTypes`, against
 * `lib.es2023` only, so host APIs (`fetch`, `setTimeout`, `process`, `require`) are errors like
 * in the sandbox. Positions are in the model's own code. Parsed lib files are cached per process.
 * Loads `typescript` on first use.
 * @throws Error when the `typescript` package is not installed.
 */
export function checkProgram(code: string, declarations: string, options: CheckProgramOptions = {}): CheckProgramResult {
  const ts = _typescript()
  const javascript = options.language === 'javascript'
  const fileName = `${_ROOT}/program.${javascript ? 'js' : 'ts'}`
  const compilerOpts = compilerOptions(ts, javascript)
  const host = _createHost(ts, compilerOpts, { fileName, text: PROGRAM_PREFIX + code + PROGRAM_SUFFIX }, declarations)
  const program = ts.createProgram({ rootNames: [_SDK_FILE, fileName], options: compilerOpts, host })
  const all = [
    ...program.getOptionsDiagnostics(),
    ...program.getGlobalDiagnostics(),
    ...program.getSyntacticDiagnostics(),
    ...program.getSemanticDiagnostics(),
  ]
  const codeLines = code.split(/\r\n|[\r\n\u2028\u2029]/)
  const diagnostics = all
    .filter((d) => d.category === ts.DiagnosticCategory.Error)
    .map((d) => toDiagnostic(ts, d, fileName, codeLines))
    .sort((a, b) => a.line - b.line || a.column - b.column || a.code - b.code)
  return { ok: diagnostics.length === 0, diagnostics }
}
