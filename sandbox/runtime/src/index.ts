export type * from './types.js'
export { DEFAULT_LIMITS, MAX_TIMER_MS, resolveLimits } from './limits.js'
export { SandboxUsageError } from './errors.js'
export { validateBindings } from './bindings.js'
export { LOG_SEPARATOR_BYTES, OutputLedger, utf8ByteLength } from './ledger.js'
export { DEFAULT_MAX_QUEUED_RUNS, RunGate } from './gate.js'
export type { GatePlace, GateRefusal } from './gate.js'
export { jsonText } from './json-text.js'
export { fulfilEntry, isParsedArguments, messageOf, rejectEntry, settleHostCall } from './settle.js'
export type { ResultBounds } from './settle.js'
export { acceptRun, type AcceptedRun, type AdmittedRun } from './request.js'
export { INLINE_STRIP_UNITS, stripTypeScript, stripTypeScriptOffThread, mapStrippedColumn } from './strip.js'
export type { StripResult } from './strip.js'
export {
  PROGRAM_FILENAME,
  PROGRAM_LINE_OFFSET,
  wrapProgram,
  prepareProgram,
  programFromStripped,
  findProgramPosition,
  formatGuestError,
} from './program.js'
export type { PreparedProgram, GuestErrorInfo } from './program.js'
export { GUEST_PRELUDE } from './prelude/source.js'
export { FinishKind, GUEST_GLOBALS, GUEST_LOG_LEVELS, parseDrainedCalls } from './prelude/protocol.js'
export type { GuestHostFunctions, QueueCaps, SettleEntry } from './prelude/protocol.js'
