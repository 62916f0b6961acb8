export type * from './types.js'
export { DEFAULT_LIMITS, resolveLimits } from './limits.js'
export { SandboxUsageError } from './errors.js'
export { validateBindings } from './bindings.js'
export { OutputLedger, utf8ByteLength } from './ledger.js'
export { jsonText } from './json-text.js'
export { fulfilEntry, isParsedArguments, messageOf, rejectEntry, settleHostCall } from './settle.js'
export { acceptRun, type AcceptedRun } from './request.js'
export { stripTypeScript, mapStrippedColumn } from './strip.js'
export type { StripResult } from './strip.js'
export {
  PROGRAM_FILENAME,
  PROGRAM_LINE_OFFSET,
  wrapProgram,
  prepareProgram,
  findProgramPosition,
  formatGuestError,
} from './program.js'
export type { PreparedProgram, GuestErrorInfo } from './program.js'
export { GUEST_PRELUDE } from './prelude/source.js'
export { FinishKind, GUEST_GLOBALS, GUEST_LOG_LEVELS, parseDrainedCalls } from './prelude/protocol.js'
export type { GuestHostFunctions, QueueCaps, SettleEntry } from './prelude/protocol.js'
