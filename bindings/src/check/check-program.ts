import { _catalogDeclarations, type CatalogSdk } from './catalog.js'
import { _checkText } from './compile.js'
import { _typescript } from './typescript.js'
import type { CheckProgramOptions, CheckProgramResult } from './types.js'

export { PROGRAM_PREFIX } from './compile.js'

export type { CheckProgramOptions, CheckProgramResult, ProgramDiagnostic } from './types.js'

/**
 * Type-checks a model program against SDK declarations (from `renderDeclarations`) with the
 * TypeScript compiler API: `code` is the body of an async function (top-level `await` and
 * `return` work), checked in strict mode with `exactOptionalPropertyTypes`, against
 * `lib.es2023` only, so host APIs (`fetch`, `setTimeout`, `process`, `require`) are errors like
 * in the sandbox. Positions are in the model's own code. Parsed lib files are cached per process.
 * Loads `typescript` on first use.
 *
 * Given a {@link CatalogSdk} instead of a text, it checks against every tool of the catalog while rendering only
 * the tools the program names: a call of any catalog tool passes, and a name that is none gets the diagnostic a
 * check against the whole catalog's declarations gives (`Property 'x' does not exist on type 'Tools'. Did you
 * mean 'y'?`). Runs on the caller's thread without bounds: see `checkProgramBounded` for programs you do not trust.
 * @throws Error when the `typescript` package is not installed; what the catalog throws.
 */
export function checkProgram(
  code: string,
  sdk: string | CatalogSdk,
  options: CheckProgramOptions = {},
): CheckProgramResult {
  const ts = _typescript()
  if (typeof sdk === 'string') return _checkText(ts, code, sdk, options)
  const { declarations, parsed } = _catalogDeclarations(ts, code, sdk, options)
  return _checkText(ts, code, declarations, options, parsed)
}
