/**
 * `@ptc/sandbox/backend`: what a backend author needs to implement `CodeRuntime` the way the QuickJS
 * and isolated-vm backends do. A harness needs none of it: the root entry is its face.
 *
 * - accepting a run: `acceptRun` (bindings, limits, program size, TypeScript stripping, the run gate),
 *   `RunGate`, `validateBindings`;
 * - the program: `prepareProgram`, `wrapProgram`, `PROGRAM_FILENAME`, positions and guest errors;
 * - the guest prelude and its host protocol: `GUEST_PRELUDE`, `GUEST_GLOBALS`, `FinishKind`,
 *   `parseQueuedCalls`;
 * - host calls: `HostCalls` (a run's sub-calls: the sub-call caps, one signal, results delivered in batches),
 *   `settleHostCall` (parse, `request.call`, the settle entry), `fulfilEntry`, `rejectEntry`;
 * - output: `OutputLedger`, `utf8ByteLength`, `LOG_SEPARATOR_BYTES`;
 * - the failure of a stopped run, one wording per limit: `stopError`;
 * - sandbox sessions' bookkeeping (one run at a time, idle TTL, cap, byte budget): `SessionTable`; the ids
 *   of claim holders, which tell a dead holder on this machine: `claimHolder`, `claimHolderGone`;
 * - a value held that must be let go exactly once (a session taken for a run): `Lifetime`;
 * - waiting for a run's signal with one listener per signal however many runs share it: `whenAborted`;
 * - starting a worker thread that does not inherit `--input-type`: `startWorker` (from sources: `spawnSourceWorker`).
 */
export { whenAborted } from '../abort.js'
export { spawnSourceWorker, startWorker } from '../worker-argv.js'
export { validateBindings } from '../bindings.js'
export { LOG_SEPARATOR_BYTES, OutputLedger, utf8ByteLength, withinOutputBudget } from '../ledger.js'
export {
  DEFAULT_MAX_EXTRA_RUNS,
  DEFAULT_MAX_QUEUED_PROGRAM_BYTES,
  LONG_RUN_CPU_MS,
  LONG_RUN_HELD_MS,
  RunGate,
} from '../gate.js'
export type { GatePlace, GateRefusal } from '../gate.js'
export { jsonText } from '../json-text.js'
export { Lifetime, LifetimeError } from '../lifetime.js'
export { fulfilEntry, messageOf, nestsDeeperThan, parseProgramValue, rejectEntry, settleHostCall } from '../settle.js'
export { parkingOf, type Parking } from '../park.js'
export { stopError, type StopReason } from '../stop.js'
export {
  heldBackArguments,
  HostCalls,
  MAX_RESULT_DEPTH,
  type HostCallsOptions,
  type ParkedHostCall,
  type ReplyFlush,
} from '../host-calls.js'
export type { ResultBounds } from '../settle.js'
export {
  acceptRun,
  checkSessionKey,
  MAX_SESSION_KEY,
  type AcceptedRun,
  type AcceptOptions,
  type AdmittedRun,
} from '../request.js'
export type { LimitCeilings } from '../limits.js'
export { SessionTable } from '../sessions/table.js'
export type { SessionEntry, SessionTurn, SessionWait } from '../sessions/entry.js'
export type { SessionSpill } from '../sessions/spill.js'
export { resolveSessionLimits } from '../sessions/limits.js'
export { DEFAULT_HOLD_MS, parkedHolder } from '../sessions/hold.js'
export { claimHolder, claimHolderGone } from '../sessions/store/holder.js'
export {
  INLINE_STRIP_UNITS,
  preloadTypeScriptStripper,
  stripTypeScript,
  stripTypeScriptOffThread,
  mapStrippedColumn,
} from '../strip.js'
export type { StripResult } from '../strip.js'
export {
  PROGRAM_FILENAME,
  PROGRAM_LINE_OFFSET,
  wrapProgram,
  wrapSessionSource,
  prepareProgram,
  programFromStripped,
  findProgramPosition,
  cutCharsOf,
  formatGuestError,
} from '../program.js'
export type { PreparedProgram, GuestErrorInfo } from '../program.js'
export { GUEST_PRELUDE } from '../prelude/source.js'
export {
  FinishKind,
  GUEST_GLOBALS,
  GUEST_LOG_LEVELS,
  MAX_VALUE_DEPTH,
  maxErrorChars,
  parseQueuedCalls,
} from '../prelude/protocol.js'
export type { GuestHostFunctions, QueueCaps, SettleEntry } from '../prelude/protocol.js'
