/**
 * The only error a `CodeRuntime` throws (its `run()` rejects with it): misuse by the host —
 * bad bindings or limits, or a disposed runtime. Guest behaviour is never an exception: it is a result.
 */
export class SandboxUsageError extends Error {
  readonly code: 'SANDBOX_MISUSE' | 'SANDBOX_DISPOSED'
  constructor(message: string, code: 'SANDBOX_MISUSE' | 'SANDBOX_DISPOSED' = 'SANDBOX_MISUSE', options?: ErrorOptions) {
    super(message, options)
    this.name = 'SandboxUsageError'
    this.code = code
  }
}
