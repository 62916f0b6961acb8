/** Why the isolated-vm backend cannot be used in this process. */
export type BackendUnavailableReason = 'missing-module' | 'node-snapshot' | 'invalid-module'

const brand = Symbol.for('@ptc/sandbox-isolated-vm.error')

/**
 * Thrown by `createIsolatedVmRuntime()` when isolated-vm cannot be used here: the optional native
 * module is not installed (or failed to build/load), or Node runs with its startup snapshot, which
 * isolated-vm does not support on Node 20+. Match on `code` (always `SANDBOX_BACKEND_UNAVAILABLE`);
 * `reason` says which case it is. `name` is the class name; `cause` is kept when wrapping.
 */
export class SandboxBackendUnavailableError extends Error {
  readonly code = 'SANDBOX_BACKEND_UNAVAILABLE' as const
  readonly backend = 'isolated-vm' as const
  readonly reason: BackendUnavailableReason

  constructor(reason: BackendUnavailableReason, message: string, options?: ErrorOptions) {
    super(message, options)
    this.name = new.target.name
    this.reason = reason
  }
  get [brand](): true {
    return true
  }
}

// `instanceof SandboxBackendUnavailableError` reads the brand, so it works across module copies (a bundled and a source
// build); a subclass uses the ordinary prototype check. Never throws: a value whose traps throw (a hostile or revoked
// Proxy) is not an instance. Installed outside the class body: a bundler renames a class that names itself in its body,
// and every error's `name` became `_SandboxBackendUnavailableError`.
Object.defineProperty(SandboxBackendUnavailableError, Symbol.hasInstance, {
  value(this: unknown, value: unknown): boolean {
    try {
      if (this !== SandboxBackendUnavailableError) return Function.prototype[Symbol.hasInstance].call(this, value)
      return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[brand] === true
    } catch {
      return false
    }
  },
})
