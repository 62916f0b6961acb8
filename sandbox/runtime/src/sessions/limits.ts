import { SandboxUsageError } from '../errors.js'

/** How a runtime bounds its sandbox sessions. Defaults: `DEFAULT_SESSION_LIMITS`. */
export interface SessionLimits {
  /** A session unused this long is dropped. */
  idleTtlMs: number
  /**
   * Live sessions at most; a new one beyond it drops the least recently used idle one. With a spill (a
   * store), also the most saves to it in progress at once: past that, a new session waits for one of them
   * to end (within its run's wall) and idle sessions stay live, so a slow store cannot make the host hold
   * the state of every session it let go of.
   */
  maxSessions: number
  /** The most state one session may keep; a run that leaves more does not keep it. */
  maxSessionBytes: number
}

/** Default `SessionLimits`: 30 minutes idle, 64 sessions, 64 MiB of state each. */
export const DEFAULT_SESSION_LIMITS: Readonly<SessionLimits> = Object.freeze({
  idleTtlMs: 30 * 60_000,
  maxSessions: 64,
  maxSessionBytes: 64 * 1024 * 1024,
})

/** Merges session limits over the defaults; a limit that is not a positive number is misuse. */
export function resolveSessionLimits(limits: Partial<SessionLimits> | undefined): SessionLimits {
  const out: SessionLimits = { ...DEFAULT_SESSION_LIMITS }
  for (const [key, value] of Object.entries(limits ?? {})) {
    if (!(key in DEFAULT_SESSION_LIMITS)) throw new SandboxUsageError(`unknown session limit "${key}"`)
    if (value === undefined) continue
    if (typeof value !== 'number' || !(value > 0) || !Number.isFinite(value)) {
      throw new SandboxUsageError(`session limit "${key}" must be a positive finite number`)
    }
    out[key as keyof SessionLimits] = value
  }
  return out
}
