// The errors of what a session store keeps: the store's own and a sealed snapshot's, branded alike.

/**
 * Why `openSnapshot` (or a runtime's `resumeSession`) refused its bytes. Match on this, not on the message.
 * `too-large`: authentic, but the session holds more than the runtime's `maxSessionBytes`.
 */
export type SnapshotErrorCode =
  | 'not-a-snapshot'
  | 'truncated'
  | 'tampered'
  | 'unsupported-version'
  | 'foreign-build'
  | 'foreign-session'
  | 'too-large'

/** Why a session store refused a key or an entry, or did not answer in time (`unavailable`). */
export type SessionStoreErrorCode = 'invalid-key' | 'corrupt-entry' | 'unavailable' | 'claimed'

const snapshotBrand = Symbol.for('@ptc/sandbox.snapshot-error')
const storeBrand = Symbol.for('@ptc/sandbox.session-store-error')

/** `openSnapshot` refused the bytes: a stable `code`, a message that says what to do. */
export class SnapshotError extends Error {
  readonly code: SnapshotErrorCode
  constructor(code: SnapshotErrorCode, message: string, options?: ErrorOptions) {
    super(message, options)
    this.code = code
    this.name = new.target.name
  }
  get [snapshotBrand](): true {
    return true
  }
}

/**
 * A session store refused a key (`invalid-key`), found an entry it cannot read (`corrupt-entry`), did not
 * answer within the time ptc waits for it or cannot work as it is (`unavailable`: a file store's directory that is
 * not one), or another process sharing it holds the session (`claimed`).
 */
export class SessionStoreError extends Error {
  readonly code: SessionStoreErrorCode
  constructor(code: SessionStoreErrorCode, message: string, options?: ErrorOptions) {
    super(message, options)
    this.code = code
    this.name = new.target.name
  }
  get [storeBrand](): true {
    return true
  }
}

// As for SandboxUsageError (../../errors.ts): `instanceof` reads the brand, so it holds across module copies.
for (const [type, brand] of [
  [SnapshotError, snapshotBrand],
  [SessionStoreError, storeBrand],
] as const) {
  Object.defineProperty(type, Symbol.hasInstance, {
    value(this: unknown, value: unknown): boolean {
      try {
        if (this !== type) return Function.prototype[Symbol.hasInstance].call(this, value)
        return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[brand] === true
      } catch {
        return false
      }
    },
  })
}
