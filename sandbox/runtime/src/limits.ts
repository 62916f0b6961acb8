import { SandboxUsageError } from './errors.js'
import type { CodeRunLimits } from './types.js'

/** The one place where the default limits live. */
export const DEFAULT_LIMITS: Readonly<CodeRunLimits> = Object.freeze({
  cpuMs: 30_000,
  wallMs: 120_000,
  memoryBytes: 256 * 1024 * 1024,
  maxOutputBytes: 1024 * 1024,
  maxSubCalls: 10_000,
  maxPendingSubCalls: 256,
  maxProgramBytes: 1024 * 1024,
  maxResultChars: 16 * 1024 * 1024,
  maxArgumentChars: 16 * 1024 * 1024,
})

const LIMIT_NAMES = Object.keys(DEFAULT_LIMITS) as (keyof CodeRunLimits)[]

/** The longest delay a Node timer honours (a longer one fires at once): the ceiling of the time limits. */
export const MAX_TIMER_MS = 2 ** 31 - 1
const TIME_LIMITS: readonly (keyof CodeRunLimits)[] = ['cpuMs', 'wallMs']

/**
 * Merges per-run limits over defaults (a backend's configured defaults, else `DEFAULT_LIMITS`).
 * Throws `SandboxUsageError` for a limit that is not a non-negative finite number or an unknown key:
 * that is misuse, so `run()` rejects.
 */
export function resolveLimits(
  limits?: Partial<CodeRunLimits>,
  defaults: Readonly<CodeRunLimits> = DEFAULT_LIMITS,
  ceilings?: LimitCeilings,
): CodeRunLimits {
  const out: CodeRunLimits = { ...DEFAULT_LIMITS, ...defaults }
  if (limits === undefined) return withinCeilings(out, ceilings)
  if (typeof limits !== 'object' || limits === null) throw new SandboxUsageError('limits must be an object')
  for (const key of Object.keys(limits)) {
    if (!LIMIT_NAMES.includes(key as keyof CodeRunLimits)) throw new SandboxUsageError(`unknown limit "${key}"`)
    const value = (limits as Record<string, unknown>)[key]
    if (value === undefined) continue
    if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) {
      throw new SandboxUsageError(`limit "${key}" must be a non-negative finite number`)
    }
    if (value > MAX_TIMER_MS && TIME_LIMITS.includes(key as keyof CodeRunLimits)) {
      throw new SandboxUsageError(`limit "${key}" must be at most ${MAX_TIMER_MS} ms`)
    }
    out[key as keyof CodeRunLimits] = value
  }
  return withinCeilings(out, ceilings)
}

/** What a backend cannot give whatever the limits ask: a limit past it is misuse (`resolveLimits`). */
export interface LimitCeilings {
  /** The most memory a run's engine can have, and why (`memoryBytes` past it could only crash every run). */
  readonly memoryBytes?: { readonly max: number; readonly why: string }
}

function withinCeilings(limits: CodeRunLimits, ceilings: LimitCeilings | undefined): CodeRunLimits {
  const memory = ceilings?.memoryBytes
  if (memory !== undefined && limits.memoryBytes > memory.max) {
    throw new SandboxUsageError(
      `limit "memoryBytes" must be at most ${memory.max} (${memory.max / 1024 / 1024} MiB): ${memory.why}; not ` +
        `${limits.memoryBytes}`,
    )
  }
  return limits
}
