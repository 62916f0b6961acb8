import type { CodeRunResult } from '@ptc/sandbox'
import { claimHolderGone, messageOf, type SessionSpill } from '@ptc/sandbox/backend'
import {
  openSnapshotAsync,
  sealSnapshotAsync,
  SessionStoreError,
  STORE_WAIT_MS,
  type SessionLimits,
  type SessionStore,
  type SnapshotKey,
} from '@ptc/sandbox/session'
import type { QuickJSVariantName } from './engine/module.js'
import type { SessionMemory } from './engine/session-memory.js'
import type { RunHost } from './host/run-host.js'
import { decodeSession, encodeSession, sessionBuild, type SavedSession } from './host/session-snapshot.js'
import { noEngineState, overSessionBudget } from './messages.js'

/** How often, at most, a session store without expiry of its own is swept (`SessionStore.sweep`). */
const SWEEP_EVERY_MS = 10 * 60_000

/** The bytes a session's state takes (`SessionTable` counts them against `maxSessionBytes`). */
export function sizeOf(memory: SessionMemory): number {
  return memory.data.byteLength + memory.ranges.byteLength
}

/** How a runtime's sessions are sealed into bytes and opened again: bound to its build, the key and its secret. */
export class SessionSeal {
  readonly #variant: QuickJSVariantName
  readonly #secret: SnapshotKey

  constructor(variant: QuickJSVariantName, secret: SnapshotKey) {
    this.#variant = variant
    this.#secret = secret
  }

  async seal(key: string, saved: SavedSession): Promise<Uint8Array> {
    return sealSnapshotAsync(
      encodeSession(saved),
      { build: await sessionBuild(this.#variant), session: key },
      this.#secret,
    )
  }

  async open(key: string, snapshot: Uint8Array): Promise<SavedSession> {
    return decodeSession(
      await openSnapshotAsync(snapshot, { build: await sessionBuild(this.#variant), session: key }, this.#secret),
    )
  }
}

/**
 * Where a runtime's sessions go when they leave memory (`sessions.store`), and how it holds them there:
 * sealed (`seal`), with the store's claims as `holder` when it has them. `options`: those of `QuickJSSessionOptions`.
 */
export function storeSpill(
  store: SessionStore,
  options: {
    readonly suspendAfterMs: number | undefined
    readonly storeWaitMs: number | undefined
    readonly claimMs: number | undefined
  },
  limits: SessionLimits,
  holder: string,
  seal: SessionSeal,
): SessionSpill<SessionMemory> {
  const { suspendAfterMs, storeWaitMs, claimMs } = options
  let sweptAt = 0
  const claim = store.claim?.bind(store)
  const release = store.release?.bind(store)
  return {
    suspendAfterMs: suspendAfterMs ?? 60_000,
    storeWaitMs: storeWaitMs ?? STORE_WAIT_MS,
    ...(claimMs !== undefined && { claimMs }),
    save: async (key, memory, runs) => {
      await store.set(key, await seal.seal(key, { memory, runs }), { ttlMs: limits.idleTtlMs })
      // Sessions nobody came back for expire; a store that does not drop them itself is swept now and then.
      if (store.sweep !== undefined && Date.now() - sweptAt >= SWEEP_EVERY_MS) {
        sweptAt = Date.now()
        void store.sweep().catch(() => undefined)
      }
    },
    load: async (key) => {
      let bytes: Uint8Array | undefined
      try {
        bytes = await store.get(key)
      } catch (error) {
        // What the store holds may be fine: the run is refused rather than started fresh (and saved over it later).
        if (error instanceof SessionStoreError && error.code !== 'unavailable') throw error
        throw new SessionStoreError(
          'unavailable',
          `the session store failed to read session "${key}": ${messageOf(error)}`,
          { cause: error },
        )
      }
      if (bytes === undefined) return undefined
      const { memory, runs } = await seal.open(key, bytes)
      return { state: memory, bytes: sizeOf(memory), runs }
    },
    remove: (key) => store.delete(key),
    // One process at a time holds a session live; the others refuse its programs until it is back in the store.
    ...(claim !== undefined &&
      release !== undefined && {
        claim: async (key, ttlMs, replaces) => {
          const other = await claim(key, holder, ttlMs, replaces === undefined ? {} : { replaces })
          // Held by a process of this machine that died (killed, crashed): taken over now, not once its claim runs out.
          return other !== undefined && claimHolderGone(other.holder)
            ? claim(key, holder, ttlMs, { replaces: other.holder })
            : other
        },
        release: (key) => release(key, holder),
        hand: (key, to, ttlMs) => claim(key, to, ttlMs, { replaces: holder }),
        unhand: (key, from) => release(key, from),
      }),
  }
}

/** What a session run leaves its session: the memory its engine captured, or why none. */
export function sessionLeft(
  host: RunHost,
  result: CodeRunResult,
  maxSessionBytes: number,
): { state: SessionMemory; bytes: number } | { reason: string } {
  const left = host.session
  if (left !== undefined) return { state: left, bytes: sizeOf(left) }
  if (host.sessionOver !== undefined) {
    return { reason: overSessionBudget(host.sessionOver, maxSessionBytes) }
  }
  return { reason: noEngineState(result.error?.kind ?? 'ok') }
}
