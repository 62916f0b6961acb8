/**
 * `@ptc/sandbox`: the runtime seam as a harness sees it: a `CodeRuntime` runs a program with its
 * bindings and limits and returns a result; failures are data (`CodeRunFailureKind`), misuse throws
 * `SandboxUsageError`. Backend authors find their kit in `@ptc/sandbox/backend`, and the shared
 * conformance suite in `@ptc/sandbox/conformance`.
 */
export type * from './types.js'
export { DEFAULT_LIMITS, MAX_TIMER_MS, resolveLimits } from './limits.js'
export { SandboxUsageError, type SandboxUsageErrorCode } from './errors.js'
export { DEFAULT_MAX_QUEUED_RUNS } from './gate.js'
