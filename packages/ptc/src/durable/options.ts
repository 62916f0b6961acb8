/** Durable approval's options (`PtcExecutorOptions.durable`), checked into the parts its steps share. */
import type { CodeRuntime } from '@ptc/sandbox'
import { STORE_WAIT_MS, type SessionStore } from '@ptc/sandbox/session'
import type { DurableParts } from './parts.js'

/** Options of durable approval. */
export interface DurableOptions {
  /** Where suspended programs wait (a file store, or Redis shared by replicas): `@ptc/sandbox/session`. */
  store: SessionStore
  /** How long a suspended program waits for its decision before its state expires (default 7 days). */
  ttlMs?: number
  /**
   * How long storing a suspended program's state, and taking it back in `resume`, may wait for the store
   * (default `STORE_WAIT_MS`, 10 s): a store that does not answer by then loses nothing it confirmed, and
   * the call ends (the program's state is lost: it could not be stored) or the resume is refused
   * (`STORE_UNAVAILABLE`: the state stays, or is put back when the store answers late).
   */
  storeWaitMs?: number
}

const DEFAULT_TTL_MS = 7 * 24 * 3_600_000

/** `options` checked for `runtime`, which must suspend runs. */
export function durableParts(options: DurableOptions, runtime: CodeRuntime): DurableParts {
  if (typeof options !== 'object' || options === null || typeof options.store?.get !== 'function') {
    throw new TypeError('durable needs { store }: a SessionStore such as createFileSessionStore(dir)')
  }
  if (typeof runtime.openRun !== 'function' || typeof runtime.resumeRun !== 'function') {
    throw new TypeError(
      'createPtcExecutor: durable approval needs a runtime that suspends runs (QuickJS); ' +
        `the ${runtime.name} runtime does not`,
    )
  }
  const ttlMs = options.ttlMs ?? DEFAULT_TTL_MS
  if (!(ttlMs > 0) || !Number.isFinite(ttlMs))
    throw new TypeError('durable.ttlMs must be a positive number of milliseconds')
  const storeWaitMs = options.storeWaitMs ?? STORE_WAIT_MS
  if (!(storeWaitMs > 0) || !Number.isFinite(storeWaitMs))
    throw new TypeError('durable.storeWaitMs must be a positive number of milliseconds')
  return {
    store: options.store,
    runtime,
    ttlMs,
    storeWaitMs,
    awaiting: new WeakMap(),
    resuming: new Set(),
    sweptAt: 0,
  }
}
