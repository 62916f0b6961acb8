/**
 * The errors of a bounded check (`checkProgramBounded`) and their messages, each naming what to change.
 * Match on `code`.
 */

/** Why a bounded check gave no result: a bound it ran into, or its process failing. */
export type CheckErrorCode = 'CHECK_TIMEOUT' | 'CHECK_MEMORY' | 'CHECK_STACK' | 'CHECK_FAILED'

const brand = Symbol.for('@ptc/bindings.check-error')

/** The messages, side by side; `limit` is the bound that was reached, `detail` what the process said. */
const MESSAGES: Readonly<Record<CheckErrorCode, (limit: number | undefined, detail: string) => string>> = {
  CHECK_TIMEOUT: (ms) => `type-checking the program took longer than ${ms} ms and was stopped: raise \`timeoutMs\``,
  CHECK_MEMORY: (mb) =>
    `type-checking the program needed more than ${mb} MB of heap and was stopped: raise \`maxMemoryMb\``,
  CHECK_STACK: () => 'the program is nested too deeply for the type checker (its stack overflowed): nest less',
  CHECK_FAILED: (_limit, detail) => `the type checker's process ended without an answer (${detail})`,
}

/** A bounded check that gave no result. `limit` is the bound reached (ms or MB) for a timeout or memory. */
export class CheckError extends Error {
  readonly code: CheckErrorCode
  readonly limit: number | undefined
  constructor(code: CheckErrorCode, options: { limit?: number; detail?: string; cause?: unknown } = {}) {
    super(MESSAGES[code](options.limit, options.detail ?? ''), { cause: options.cause })
    this.code = code
    this.limit = options.limit
    this.name = 'CheckError'
  }
  get [brand](): true {
    return true
  }
}

// As `BindingsError`: `instanceof` reads the brand, so it holds across copies of the package, and never throws.
Object.defineProperty(CheckError, Symbol.hasInstance, {
  value(this: unknown, value: unknown): boolean {
    try {
      if (this !== CheckError) return Function.prototype[Symbol.hasInstance].call(this, value)
      return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[brand] === true
    } catch {
      return false
    }
  },
})
