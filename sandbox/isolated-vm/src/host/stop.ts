import type { CodeRunError, CodeRunLimits } from '@ptc/sandbox'
import type { OutputLedger } from '@ptc/sandbox/backend'

/** Why the host ended a run early. */
export type StopReason = 'abort' | 'wall' | 'cpu' | 'memory' | 'limit-calls' | 'limit-pending' | 'output' | 'stuck'

/** The failure a host-side stop produces (the wording matches the QuickJS backend). */
export function stopError(reason: StopReason, limits: CodeRunLimits, ledger: OutputLedger): CodeRunError {
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
    case 'output':
      return { kind: 'output-limit', message: ledger.describeOverflow('log') }
    case 'stuck':
      return { kind: 'exception', message: 'the program awaits a promise that can never settle (no sub-call is pending)' }
  }
}
