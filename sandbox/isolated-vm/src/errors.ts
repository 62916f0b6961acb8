/** Why the isolated-vm backend cannot be used in this process. */
export type BackendUnavailableReason = 'missing-module' | 'node-snapshot' | 'invalid-module'

/**
 * Thrown by `createIsolatedVmRuntime()` when isolated-vm cannot be used here: the optional native
 * module is not installed (or failed to build/load), or Node runs with its startup snapshot, which
 * isolated-vm does not support on Node 20+. Match on `code`; `reason` says which case it is.
 */
export class SandboxBackendUnavailableError extends Error {
  readonly code = 'SANDBOX_BACKEND_UNAVAILABLE' as const
  readonly backend = 'isolated-vm' as const
  readonly reason: BackendUnavailableReason

  constructor(reason: BackendUnavailableReason, message: string, options?: ErrorOptions) {
    super(message, options)
    this.name = 'SandboxBackendUnavailableError'
    this.reason = reason
  }
}
