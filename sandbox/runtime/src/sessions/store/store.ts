import { SandboxUsageError } from '../../errors.js'
import { SessionStoreError } from './errors.js'

/** Where suspended sessions are kept, by key. A value is opaque bytes (a sealed snapshot). */
export interface SessionStore {
  /** The bytes stored under `key`, or `undefined` when there are none or they expired. */
  get(key: string): Promise<Uint8Array | undefined>
  /** Stores `bytes` under `key`, replacing what was there; `ttlMs` makes the entry expire that long from now. */
  set(key: string, bytes: Uint8Array, options?: SessionStoreSetOptions): Promise<void>
  /** Removes the entry under `key`; `true` when there was a live one. */
  delete(key: string): Promise<boolean>
  /**
   * Gets and removes the entry under `key` at once: of several takers of one key (in several processes),
   * at most one gets the bytes. For what must be used once, such as a suspended program's state.
   */
  take?(key: string): Promise<Uint8Array | undefined>
  /**
   * Claims `key` for `holder` (an id of one process) for `ttlMs`, or renews `holder`'s claim: of several
   * processes sharing the store, one at a time holds a session live, and the others refuse its programs
   * instead of running them on the state the store had. Resolves `undefined` when `holder` holds the claim
   * now, else the claim that stands in the way. Claims live beside the entries: `set`, `get` and `delete` do
   * not touch them. A store without claims leaves routing to the host (each session's programs to one process).
   * `replaces` names a holder known to be gone (its process died): its claim counts as free.
   */
  claim?(key: string, holder: string, ttlMs: number, options?: SessionClaimOptions): Promise<SessionClaim | undefined>
  /** Ends `holder`'s claim of `key`; another holder's claim is left as it is. */
  release?(key: string, holder: string): Promise<void>
  /**
   * Removes what has expired (and what a crashed `set` left behind), for a store whose entries do not
   * expire on their own (the file store; Redis expires its keys itself). Resolves how many it removed.
   */
  sweep?(): Promise<number>
  /** Releases what the store holds open, if anything. */
  close?(): Promise<void>
}

/** A claim of another holder that stands in the way (`SessionStore.claim`). */
export interface SessionClaim {
  readonly holder: string
  /** Milliseconds until it expires unless its holder renews it. */
  readonly expiresInMs: number
}

/** Options of `SessionStore.claim`. */
export interface SessionClaimOptions {
  /** A holder whose claim counts as free: its process is known to be gone. */
  replaces?: string
}

/** Options of `SessionStore.set`. */
export interface SessionStoreSetOptions {
  /** Milliseconds until the entry expires: a positive number (rounded up to a whole millisecond). */
  ttlMs?: number
}

/** The longest key a store accepts, in UTF-8 bytes. */
export const MAX_SESSION_KEY_BYTES = 1024

/** Throws `SessionStoreError` (`invalid-key`) unless `key` is a non-empty, well-formed string of bounded length. */
export function checkKey(key: unknown): asserts key is string {
  if (typeof key !== 'string' || key === '')
    throw new SessionStoreError('invalid-key', `a session key must be a non-empty string, not ${describe(key)}`)
  const bytes = Buffer.byteLength(key, 'utf8')
  if (bytes > MAX_SESSION_KEY_BYTES)
    throw new SessionStoreError(
      'invalid-key',
      `a session key is at most ${MAX_SESSION_KEY_BYTES} UTF-8 bytes; this one is ${bytes}`,
    )
  // A lone surrogate would be stored as U+FFFD, so two different keys would name one entry.
  if (Buffer.from(key, 'utf8').toString('utf8') !== key)
    throw new SessionStoreError('invalid-key', 'a session key must be well-formed Unicode (it has a lone surrogate)')
}

/** The TTL of `options` as whole milliseconds, `undefined` for none; throws `SandboxUsageError` for a bad one. */
export function ttlOf(options: SessionStoreSetOptions | undefined): number | undefined {
  const ttl = options?.ttlMs
  if (ttl === undefined) return undefined
  if (typeof ttl !== 'number' || !Number.isFinite(ttl) || ttl <= 0)
    throw new SandboxUsageError(`ttlMs must be a positive finite number of milliseconds, not ${describe(ttl)}`)
  return Math.ceil(ttl)
}

/** The longest claim holder id a store accepts. */
export const MAX_HOLDER_CHARS = 128

/** Throws `SandboxUsageError` unless `holder` is a claim holder id: 1 to 128 characters of `A-Z a-z 0-9 . _ : -`. */
export function checkHolder(holder: unknown): asserts holder is string {
  if (typeof holder !== 'string' || !/^[\w.:-]{1,128}$/.test(holder)) {
    throw new SandboxUsageError(
      `a claim holder is 1 to ${MAX_HOLDER_CHARS} characters of letters, digits, ".", "_", ":" and "-", ` +
        `not ${describe(holder)}`,
    )
  }
}

/** The TTL of a claim as whole milliseconds; throws `SandboxUsageError` for a missing or bad one. */
export function claimTtl(ttlMs: unknown): number {
  const ttl = ttlOf({ ttlMs: ttlMs as number })
  if (ttl === undefined) throw new SandboxUsageError('a claim needs ttlMs: a positive finite number of milliseconds')
  return ttl
}

/** Throws `SandboxUsageError` unless `bytes` is a Uint8Array. */
export function checkBytes(bytes: unknown): asserts bytes is Uint8Array {
  if (!(bytes instanceof Uint8Array))
    throw new SandboxUsageError(`a session store stores a Uint8Array, not ${describe(bytes)}`)
}

function describe(value: unknown): string {
  return typeof value === 'string'
    ? JSON.stringify(value)
    : value === null
      ? 'null'
      : typeof value === 'number'
        ? String(value)
        : typeof value
}
