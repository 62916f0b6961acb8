/**
 * Every error of `@ptc/bindings`, each with a stable `code`. Match on `code`.
 */

/** Stable codes of `@ptc/bindings` usage errors. */
export type BindingsErrorCode = 'INVALID_BINDING_NAMES'

/** One problem found in a list of binding names. */
export interface BindingNameProblem {
  /** Position in the checked list. */
  readonly index: number
  /** The offending entry, as given (coerced to text for non-strings). */
  readonly name: string
  readonly message: string
}

const brand = Symbol.for('@ptc/bindings.error')

/** Base class: a stable `code`, a `name` equal to the class name, `cause` when wrapping. */
export class BindingsError extends Error {
  readonly code: BindingsErrorCode
  constructor(code: BindingsErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options)
    this.code = code
    this.name = new.target.name
  }
  get [brand](): true {
    return true
  }
}

// `instanceof BindingsError` reads the brand, so it works across module copies (a bundled and a source build); a
// subclass uses the ordinary prototype check. Never throws: a value whose traps throw (a hostile or revoked
// Proxy) is not an instance. Installed outside the class body: a bundler renames a class that names itself
// in its body, and every error's `name` became `_BindingsError`.
Object.defineProperty(BindingsError, Symbol.hasInstance, {
  value(this: unknown, value: unknown): boolean {
    try {
      if (this !== BindingsError) return Function.prototype[Symbol.hasInstance].call(this, value)
      return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[brand] === true
    } catch {
      return false
    }
  },
})

/** A list of tool names cannot be bound under `tools`; `problems` lists every one. */
export class BindingNameError extends BindingsError {
  readonly problems: readonly BindingNameProblem[]
  constructor(problems: readonly BindingNameProblem[]) {
    super(
      'INVALID_BINDING_NAMES',
      `invalid binding names: ${problems.map((p) => `[${p.index}] ${p.message}`).join('; ')}`,
    )
    this.problems = Object.freeze([...problems])
  }
}
