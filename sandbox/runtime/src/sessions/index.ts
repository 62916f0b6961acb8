/**
 * `@ptc/sandbox/session`: the engine-independent parts of suspending a sandbox session to bytes and resuming
 * it in another process.
 *
 * - sealed snapshots: `sealSnapshot` compresses a payload and binds it to a build and a session under the
 *   host's HMAC key; `openSnapshot` checks all of it and returns the payload, or throws `SnapshotError`;
 * - stores of sealed snapshots: the `SessionStore` interface, a file store (the default) and a Redis store, and
 *   the ids of claim holders, which tell a dead holder on this machine (`claimHolder`, `claimHolderGone`);
 * - durable runs (`CodeRunRequest.durable`): `parkCall`, with which a host call parks, and the types of a
 *   suspended run and its resumption;
 * - the bounds of a runtime's sessions (`SessionLimits`, `DEFAULT_SESSION_LIMITS`) and the text that tells a
 *   model how session programs share state (`SESSION_GUIDANCE`).
 */
export { SNAPSHOT_FORMAT_VERSION } from './snapshot/format.js'
export type { SnapshotIdentity, SnapshotKey } from './snapshot/format.js'
export { openSnapshot, openSnapshotAsync } from './snapshot/open.js'
export { sealSnapshot, sealSnapshotAsync } from './snapshot/seal.js'
export { SessionStoreError, SnapshotError } from './store/errors.js'
export type { SessionStoreErrorCode, SnapshotErrorCode } from './store/errors.js'
export { MAX_SESSION_KEY_BYTES } from './store/store.js'
export type {
  SessionClaim,
  SessionClaimOptions,
  SessionStore,
  SessionStoreSetOptions,
} from './store/store.js'
export { STORE_WAIT_MS, waitForStore } from './store/wait.js'
export { claimHolder, claimHolderGone } from './store/holder.js'
export { createFileSessionStore } from './store/file-store.js'
export type { FileSessionStoreOptions } from './store/file-store.js'
export {
  DEFAULT_REDIS_CLAIM_PREFIX,
  DEFAULT_REDIS_PREFIX,
  createRedisSessionStore,
} from './store/redis-store.js'
export type { RedisSessionClient, RedisSessionStoreOptions } from './store/redis-store.js'
export { DEFAULT_SESSION_LIMITS, type SessionLimits } from './limits.js'
export { SESSION_GUIDANCE } from '../session-program.js'
export { parkCall } from '../park.js'
export type { DurableRun, ParkedCall, ResumeRunRequest, SuspendedRun, SuspendedRunState } from '../durable.js'
