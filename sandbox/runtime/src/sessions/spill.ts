import type { SessionClaim } from './store/store.js'
import { STORE_WAIT_MS } from './store/wait.js'

/**
 * Where a `SessionTable` puts the sessions it lets go of instead of dropping them (a `SessionStore`
 * behind sealed snapshots): idle ones past `suspendAfterMs` and the least recently used at the cap.
 * A session that is not live is looked for here before it starts fresh.
 */
export interface SessionSpill<S> {
  save(key: string, state: S, runs: number): Promise<void>
  /**
   * The saved session, or undefined when there is none; throws when one exists but cannot be resumed (the
   * session then starts fresh, with a note), or `SessionStoreError` `unavailable` when the store could not be
   * read (the run is refused: starting fresh would later save over the state the store still has).
   */
  load(key: string): Promise<{ state: S; bytes: number; runs: number } | undefined>
  /** Removes the saved session; whether there was one. */
  remove(key: string): Promise<boolean>
  /**
   * Claims `key` for this process for `ttlMs` or renews its claim: `undefined` when this process holds it,
   * else the claim of another process sharing the store (which holds the session live). Without it, nothing
   * keeps two processes from running one session at once (each on its own copy).
   */
  claim?(key: string, ttlMs: number, replaces?: string): Promise<SessionClaim | undefined>
  /** Ends this process's claim on `key`, if it holds one. */
  release?(key: string): Promise<void>
  /**
   * Gives this process's claim on `key` (or the free key) to `holder` for `ttlMs`: a session whose run suspended
   * (`SessionTable.park`) stays held for that run's resume, which claims it with `replaces: holder`.
   */
  hand?(key: string, holder: string, ttlMs: number): Promise<SessionClaim | undefined>
  /** Ends `holder`'s claim on `key` (one `hand` gave), if it holds it. */
  unhand?(key: string, holder: string): Promise<void>
  /**
   * How long a claim lasts past the run that takes it (default `CLAIM_MS`): the table renews its claims on
   * sessions it holds (running or idle) when half of this is left, so a process that dies without letting
   * its sessions go blocks them for about this long.
   */
  readonly claimMs?: number
  /** A live session idle this long is saved and leaves memory. */
  readonly suspendAfterMs: number
  /** How long `close` and `end` wait for the saves in progress or a removal. Default `STORE_WAIT_MS`. */
  readonly storeWaitMs?: number
}

/** How long a session's claim lasts past its run, by default (`SessionSpill.claimMs`). */
export const CLAIM_MS = 30_000

/** A spill that claims sessions and can hand a claim over. */
export type HoldingSpill<S> = SessionSpill<S> & Required<Pick<SessionSpill<S>, 'hand' | 'claim'>>

/** Whether `spill` claims sessions in its store and can hand a claim over (where `park` holds sessions for resumes). */
export function holdsInStore<S>(spill: SessionSpill<S> | undefined): spill is HoldingSpill<S> {
  return spill?.hand !== undefined && spill.claim !== undefined
}

/** How long the table waits for the spill's store where nothing else bounds the wait (its `storeWaitMs`). */
export function storeWaitOf<S>(spill: SessionSpill<S> | undefined): number {
  return spill?.storeWaitMs ?? STORE_WAIT_MS
}
