import type * as TS from 'typescript'
import type { CheckProgramOptions, CheckProgramResult, ProgramDiagnostic } from './types.js'
import { _createHost, _ROOT, _SDK_FILE } from './host.js'

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

/** The file the checker reads for `code`: the model's code wrapped as the body of an async function. */
export interface _ProgramFile {
  readonly fileName: string
  readonly text: string
}

export function _programFile(code: string, options: CheckProgramOptions): _ProgramFile {
  const javascript = options.language === 'javascript'
  return { fileName: `${_ROOT}/program.${javascript ? 'js' : 'ts'}`, text: PROGRAM_PREFIX + code + PROGRAM_SUFFIX }
}

/** Parses the program file as the checker would (so a parse made to read it can be handed to the checker). */
export function _parseProgram(ts: typeof TS, file: _ProgramFile): TS.SourceFile {
  return ts.createSourceFile(file.fileName, file.text, ts.ScriptTarget.ES2022, false)
}

/** TypeScript's install hints (`@types/node`, `lib: dom`) would mislead a model: the sandbox has no host. */
const HOST_HINT = /^Cannot find name '([^']*)'\. (?:Do you need|Try) .*$/s
const NO_HOST = "Cannot find name '$1'. Programs have only ECMAScript built-ins, tools, ToolCallError and console."

function toDiagnostic(
  ts: typeof TS,
  d: TS.Diagnostic,
  programFile: string,
  codeLines: readonly string[],
): ProgramDiagnostic {
  const message = ts.flattenDiagnosticMessageText(d.messageText, '\n').replace(HOST_HINT, NO_HOST)
  if (d.file === undefined || d.start === undefined) {
    return { line: 0, column: 0, message, code: d.code, source: 'global' }
  }
  const at = d.file.getLineAndCharacterOfPosition(d.start)
  if (d.file.fileName !== programFile) {
    const source = d.file.fileName === _SDK_FILE ? 'declarations' : 'global'
    return { line: at.line + 1, column: at.character + 1, message, code: d.code, source }
  }
  // File line 0 is the prefix; the model's line n (1-based) is file line n. Positions in the
  // wrapper (an unclosed brace reported at the suffix) clamp to the model's code.
  const last = Math.max(1, codeLines.length)
  if (at.line < 1) return { line: 1, column: 1, message, code: d.code, source: 'program' }
  if (at.line > last) {
    return { line: last, column: (codeLines[last - 1]?.length ?? 0) + 1, message, code: d.code, source: 'program' }
  }
  return { line: at.line, column: at.character + 1, message, code: d.code, source: 'program' }
}

/** Type-checks `code` against one declarations text; `parsed` is the program file when already parsed. */
export function _checkText(
  ts: typeof TS,
  code: string,
  declarations: string,
  options: CheckProgramOptions,
  parsed?: TS.SourceFile,
): CheckProgramResult {
  const file = _programFile(code, options)
  const compilerOpts = compilerOptions(ts, options.language === 'javascript')
  const host = _createHost(ts, compilerOpts, parsed === undefined ? file : { ...file, parsed }, declarations)
  const program = ts.createProgram({ rootNames: [_SDK_FILE, file.fileName], options: compilerOpts, host })
  const all = [
    ...program.getOptionsDiagnostics(),
    ...program.getGlobalDiagnostics(),
    ...program.getSyntacticDiagnostics(),
    ...program.getSemanticDiagnostics(),
  ]
  const codeLines = code.split(/\r\n|[\r\n\u2028\u2029]/)
  const diagnostics = all
    .filter((d) => d.category === ts.DiagnosticCategory.Error)
    .map((d) => toDiagnostic(ts, d, file.fileName, codeLines))
    .sort((a, b) => a.line - b.line || a.column - b.column || a.code - b.code)
  return { ok: diagnostics.length === 0, diagnostics }
}
