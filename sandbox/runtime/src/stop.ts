import type { OutputLedger } from './ledger.js'
import type { CodeRunError, CodeRunLimits } from './types.js'

/** Why a run was ended early, by whichever layer enforces that limit. */
export type StopReason =
  | 'abort'
  | 'wall'
  | 'cpu'
  | 'memory'
  | 'limit-calls'
  | 'limit-pending'
  | 'limit-args'
  | 'output'
  | 'stuck'

/**
 * The failure of a run stopped for `reason`: the one wording of each stop, whichever backend and
 * layer (engine, host, guest) stopped it. `ledger` is needed for `output` only.
 */
export function stopError(reason: StopReason, limits: CodeRunLimits, ledger?: OutputLedger): CodeRunError {
  switch (reason) {
    case 'abort':
      return { kind: 'abort', message: 'the run was aborted' }
    case 'wall':
      return { kind: 'timeout', message: `wall-clock limit of ${limits.wallMs} ms exceeded` }
    case 'cpu':
      return { kind: 'timeout', message: `CPU time limit of ${limits.cpuMs} ms exceeded` }
    case 'memory':
      return { kind: 'memory', message: `the memory limit of ${limits.memoryBytes} bytes was exceeded` }
    case 'limit-calls':
      return { kind: 'limit', message: `sub-call limit of ${limits.maxSubCalls} calls exceeded` }
    case 'limit-pending':
      return { kind: 'limit', message: `pending sub-call limit of ${limits.maxPendingSubCalls} calls exceeded` }
    case 'limit-args':
      return {
        kind: 'limit',
        message:
          `the arguments of the pending sub-calls exceeded the memory limit of ${limits.memoryBytes} bytes ` +
          `(the host holds each call's arguments until it settles)`,
      }
    case 'output':
      return {
        kind: 'output-limit',
        message: ledger?.describeOverflow('log') ?? `the output limit of ${limits.maxOutputBytes} bytes was exceeded`,
      }
    case 'stuck':
      return {
        kind: 'exception',
        message: 'the program awaits a promise that can never settle (no sub-call is pending)',
      }
  }
}
