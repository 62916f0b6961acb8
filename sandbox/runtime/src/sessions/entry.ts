/** One session of a `SessionTable`: its state between runs. */
export interface SessionEntry<S> {
  readonly key: string
  state: S | undefined
  /** Bytes `state` holds. */
  bytes: number
  runs: number
  /** A run holds the session. */
  busy: boolean
  /** `endSession` came during a run: that run's state is not kept. */
  ended: boolean
  lastUsed: number
  /** Until when (epoch ms) this process's claim on the session in the spill's store holds; 0 for none. */
  claimedUntil: number
  /**
   * Why the claim was lost to another process (a renewal found it held): the session's next run is refused and
   * it is dropped.
   */
  claimLost?: string
  /** A renewal of the claim in progress. */
  renewing?: Promise<string | undefined> | undefined
  /** `suspendSession` is taking it out (the entry is busy meanwhile, running nothing). */
  suspending?: boolean
  /**
   * A run of the session suspended (durable approval) and holds it (the entry stays busy) for its resume by
   * `holder` until `until` (epoch ms); then the session goes on from `state`, its state before that run.
   */
  parked?: { holder: string; until: number } | undefined
  /** What the session's next run is told (its state went back to before a suspended run that was not resumed). */
  note?: string | undefined
  /**
   * Taken for a resume without its state (`take` with `resumes`: the resumed run's memory holds it; the state
   * from before that run is in the spill's store): a resume that leaves no state lets the entry go unsaved.
   */
  bare?: boolean | undefined
  /** When (epoch ms) and why its last idle save failed: the sweeps try again `suspendAfterMs` later (`Saves.letGo`). */
  saveFailed?: { at: number; why: string } | undefined
}

/**
 * A session taken for one run (`SessionTable.take`), or why it cannot run now: busy, held or at the cap (no
 * `reason`), the spill's store did not answer before the run's deadline (`wall`) or signal (`abort`), or it
 * failed to claim the session (`store`).
 */
export type SessionTurn<S> =
  | { ok: true; entry: SessionEntry<S>; fresh: boolean; note?: string }
  | { ok: false; message: string; reason?: 'wall' | 'abort' | 'store' }

/** What bounds `SessionTable.take`'s wait for the spill: the run's wall deadline (`performance.now()` time), signal. */
export interface SessionWait {
  readonly deadline: number
  readonly signal?: AbortSignal | undefined
}
