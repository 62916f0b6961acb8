/** Stable codes of `SandboxUsageError`: bad bindings, limits or options, or a disposed runtime. */
export type SandboxUsageErrorCode = 'SANDBOX_MISUSE' | 'SANDBOX_DISPOSED'

const brand = Symbol.for('@ptc/sandbox.error')

/**
 * The only error a `CodeRuntime` throws (its `run()` rejects with it, its factory throws it): misuse
 * by the host — bad bindings, limits or options, or a disposed runtime. Guest behaviour is never an
 * exception: it is a result. A stable `code`, a `name` equal to the class name, `cause` when wrapping.
 */
export class SandboxUsageError extends Error {
  readonly code: SandboxUsageErrorCode
  constructor(message: string, code: SandboxUsageErrorCode = 'SANDBOX_MISUSE', options?: ErrorOptions) {
    super(message, options)
    this.code = code
    this.name = new.target.name
  }
  get [brand](): true {
    return true
  }
}

// `instanceof SandboxUsageError` reads the brand, so it works across module copies (a bundled and a source build); a
// subclass uses the ordinary prototype check. Never throws: a value whose traps throw (a hostile or revoked
// Proxy) is not an instance. Installed outside the class body: a bundler renames a class that names itself
// in its body, and every error's `name` became `_SandboxUsageError`.
Object.defineProperty(SandboxUsageError, Symbol.hasInstance, {
  value(this: unknown, value: unknown): boolean {
    try {
      if (this !== SandboxUsageError) return Function.prototype[Symbol.hasInstance].call(this, value)
      return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[brand] === true
    } catch {
      return false
    }
  },
})
