import { validateBindings } from './bindings.js'
import { SandboxUsageError } from './errors.js'
import { resolveLimits } from './limits.js'
import { prepareProgram, type PreparedProgram } from './program.js'
import type { CodeRunLimits, CodeRunRequest, CodeRunResult } from './types.js'

/** A checked run request: what a backend starts, or the result of a program that never starts (a syntax error). */
export type AcceptedRun =
  | { readonly ok: true; readonly bindings: readonly string[]; readonly limits: CodeRunLimits; readonly program: PreparedProgram }
  | { readonly ok: false; readonly result: CodeRunResult }

/**
 * The checks every backend makes before a run: misuse (not a request, no code,
 * no `call`, an unknown language, bad bindings) throws `SandboxUsageError`;
 * limits resolve over the backend's defaults; the program is stripped and
 * wrapped, and a syntax error becomes a finished `syntax` result.
 */
export function acceptRun(request: CodeRunRequest, defaults: CodeRunLimits): AcceptedRun {
  if (request === null || typeof request !== 'object') throw new SandboxUsageError('the run request must be an object')
  if (typeof request.code !== 'string') throw new SandboxUsageError('code must be a string')
  if (typeof request.call !== 'function') throw new SandboxUsageError('call must be a function')
  if (request.language !== undefined && request.language !== 'typescript' && request.language !== 'javascript') {
    throw new SandboxUsageError('language must be "typescript" or "javascript"')
  }
  const bindings = validateBindings(request.bindings)
  const limits = resolveLimits(request.limits, defaults)
  const t0 = performance.now()
  const prepared = prepareProgram(request.code, request.language)
  if (!prepared.ok) {
    return { ok: false, result: { logs: [], error: prepared.error, stats: { cpuMs: 0, wallMs: performance.now() - t0, subCalls: 0 } } }
  }
  return { ok: true, bindings, limits, program: prepared.program }
}
