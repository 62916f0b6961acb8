/**
 * A suspended program's state as one resume holds it. Which resumer goes on with a state, across processes too:
 * - a store with claims (file, Redis): this one claims the token (`lease.ts`), reads the state, and deletes it only
 *   once the program goes on (its first call, or its end);
 * - a store that can take: the state is taken at once (and put back if this resume is refused);
 * - else it is read, and deleted once the checks passed.
 */
import type { SessionStore } from '@ptc/sandbox/session'
import type { ResumeError } from '../errors.js'
import type { LateDelete } from './lease.js'
import { bounded, type DurableParts } from './parts.js'
import * as refusals from './refusals.js'

/** How a resume holds a state: leased (claimed first), taken from the store, or read. */
export type Holding = 'leased' | 'taken' | 'read'

/** How a resume from `store` holds its state, given whether it holds a lease. */
export function holdingOf(store: SessionStore, leased: boolean): Holding {
  return leased ? 'leased' : store.take !== undefined ? 'taken' : 'read'
}

/** Reads (or takes) the state of `token`; refused when the store has none, fails, or does not answer. */
export async function readState(
  parts: DurableParts,
  token: string,
  holding: Holding,
  signal: AbortSignal,
): Promise<HeldState> {
  const store = parts.store
  const taking = holding === 'taken'
  // Aborted: nothing is taken (a take given up on would hold the state away until it is put back).
  if (signal.aborted) throw signal.reason
  const reading = Promise.resolve().then(() =>
    taking ? (store.take as NonNullable<SessionStore['take']>)(token) : store.get(token),
  )
  let read: { ok: true; value: Uint8Array | undefined } | { ok: false; reason: 'wall' | 'abort' }
  try {
    read = await bounded(parts, reading, signal)
  } catch (error) {
    throw refusals.storeFailed(token, error, 'to give the state of')
  }
  if (!read.ok) {
    // A take that answers after all hands the state back, for the next resume.
    if (taking)
      void reading
        .then((late) => (late === undefined ? undefined : store.set(token, late, { ttlMs: parts.ttlMs })))
        .catch(() => undefined)
    if (read.reason === 'abort') throw signal.reason
    throw refusals.storeSilent(token, parts.storeWaitMs, 'for the state of')
  }
  const bytes = read.value
  if (bytes === undefined) throw refusals.unknownToken(token)
  return new HeldState(parts, token, bytes, holding)
}

export class HeldState {
  /** A delete of the leased state the store did not confirm in time, which stopped the program (`removeLeased`). */
  late: LateDelete | undefined

  constructor(
    private readonly parts: DurableParts,
    readonly token: string,
    readonly bytes: Uint8Array,
    readonly holding: Holding,
  ) {}

  /** Writes the state back until it would have expired (a state that says when); an expired one is not. */
  async writeBack(expiresAt: unknown): Promise<void> {
    const ttlMs =
      typeof expiresAt === 'number' && Number.isFinite(expiresAt) ? expiresAt - Date.now() : this.parts.ttlMs
    if (ttlMs > 0) await this.parts.store.set(this.token, this.bytes, { ttlMs })
  }

  /** A taken state goes back (within `storeWaitMs`); a leased one never left, a read one is not deleted yet. */
  async putBack(expiresAt: unknown): Promise<void> {
    if (this.holding === 'taken') await bounded(this.parts, this.writeBack(expiresAt))
  }

  /** Refuses the resume with `error`, a taken state put back first. */
  async refuse(error: ResumeError, expiresAt?: unknown): Promise<never> {
    if (this.holding === 'taken') await this.putBack(expiresAt)
    throw error
  }

  /**
   * A read state is deleted once the checks passed: another resume of this token then finds nothing.
   * Unconfirmed, the program does not go on (it could then run twice).
   */
  async removeIfRead(): Promise<void> {
    const { parts, token } = this
    if (this.holding === 'read' && !(await bounded(parts, parts.store.delete(token))).ok)
      throw refusals.storeSilent(token, parts.storeWaitMs, 'to remove the state of')
  }

  /**
   * Deletes the leased state as the program goes on; whether the store confirmed it. Unconfirmed and `stops` (the
   * program is stopped), the delete may still happen later (a Redis command is sent when the server is back): it
   * is kept as `late`, and the state written back before the lease ends, as the resume answered that it stays.
   */
  async removeLeased(stops: boolean, expiresAt: unknown): Promise<boolean> {
    const { parts, token } = this
    const deleting = Promise.resolve().then(() => parts.store.delete(token))
    const done = await bounded(parts, deleting).catch(() => undefined)
    if (done?.ok === false && stops) this.late = { deleting, restore: () => this.writeBack(expiresAt) }
    return done?.ok === true
  }
}
