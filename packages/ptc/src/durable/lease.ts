/**
 * The lease: with a store that claims (file, Redis), a resumer claims a token's resume before it reads the state,
 * and releases the claim once the resume answered. A resumer that dies leaves the state where it was: its claim is
 * taken over as soon as its process is known gone, else when it runs out.
 */
import { MAX_TIMER_MS } from '@ptc/sandbox'
import { claimHolder, claimHolderGone, waitForStore, type SessionStore } from '@ptc/sandbox/session'
import { bounded, type DurableParts } from './parts.js'
import * as refusals from './refusals.js'

/** The claim of a token's resume is kept under the token with this after it (claims and entries do not meet). */
const LEASE_SUFFIX = ':resume'
/** Past a resumed run's longest wall and a store wait: a claim of a process that hangs runs out after that. */
const LEASE_MARGIN_MS = 30_000

/** This process's claim of a token's resume. */
export interface Lease {
  readonly key: string
  readonly holder: string
  /** When the claim was asked for (`performance.now()`) and for how long (ms): it holds until at least then. */
  since: number
  readonly ttlMs: number
}

/** A delete of the leased state the store did not confirm in time, and how to write the state back once it settles. */
export interface LateDelete {
  readonly deleting: Promise<unknown>
  readonly restore: () => Promise<void>
}

/** Whether resumes from `store` are leased: it claims and releases. */
export function leases(store: SessionStore): boolean {
  return store.claim !== undefined && store.release !== undefined
}

/**
 * Claims the resume of `token` for this process, for as long as a resumed run may take (`maxWallMs` and a
 * margin). A claim of a process known gone is taken over; a live one's is `IN_PROGRESS`.
 */
export async function claimResume(
  parts: DurableParts,
  token: string,
  maxWallMs: number,
  signal: AbortSignal,
): Promise<Lease> {
  const store = parts.store
  const claim = store.claim as NonNullable<SessionStore['claim']>
  const ttlMs = Math.min(MAX_TIMER_MS, maxWallMs + parts.storeWaitMs + LEASE_MARGIN_MS)
  const lease: Lease = { key: `${token}${LEASE_SUFFIX}`, holder: claimHolder('resume'), since: 0, ttlMs }
  let replaces: string | undefined
  for (let attempt = 0; attempt < 2; attempt++) {
    // An aborted resume takes nothing: a claim asked for now would outlive it.
    if (signal.aborted) throw signal.reason
    lease.since = performance.now()
    const options = replaces === undefined ? undefined : { replaces }
    const claiming = Promise.resolve().then(() => claim(lease.key, lease.holder, ttlMs, options))
    let claimed: Awaited<ReturnType<typeof waitForStore<Awaited<ReturnType<typeof claim>>>>>
    try {
      claimed = await bounded(parts, claiming, signal)
    } catch (error) {
      throw refusals.storeFailed(token, error, 'to let this process resume')
    }
    if (!claimed.ok) {
      releaseWhenAnswered(parts, lease, claiming)
      if (claimed.reason === 'abort') throw signal.reason
      throw refusals.storeSilent(token, parts.storeWaitMs, 'to let this process resume')
    }
    const other = claimed.value
    if (other === undefined) return lease
    if (!claimHolderGone(other.holder)) break
    replaces = other.holder
  }
  throw refusals.resumingElsewhere(token)
}

/** A claim given up on (aborted, or the store is late): one the store makes after all is released as it answers. */
function releaseWhenAnswered(parts: DurableParts, lease: Lease, claiming: Promise<unknown>): void {
  const store = parts.store
  const release = (store.release as NonNullable<SessionStore['release']>).bind(store)
  void claiming
    .then((other) => (other === undefined ? release(lease.key, lease.holder) : undefined))
    .catch(() => undefined)
}

/**
 * Releases the lease once the resume answered. After a `late` delete the lease is kept until that delete settles:
 * no other resumer reads the state meanwhile. A delete that settles once the lease may have run out writes nothing
 * back: another resumer may have run the program since (a state lost is the lesser harm than an approved call run
 * twice).
 */
export async function releaseLease(parts: DurableParts, lease: Lease, late: LateDelete | undefined): Promise<void> {
  const { key, holder } = lease
  const release = (parts.store.release as NonNullable<SessionStore['release']>).bind(parts.store)
  if (late === undefined) await bounded(parts, release(key, holder)).catch(() => undefined)
  else {
    const { deleting, restore } = late
    const { since, ttlMs } = lease
    void deleting
      .then(
        () => (performance.now() < since + ttlMs - parts.storeWaitMs ? restore() : undefined),
        () => undefined,
      )
      .catch(() => undefined)
      .then(() => release(key, holder))
      .catch(() => undefined)
  }
}
