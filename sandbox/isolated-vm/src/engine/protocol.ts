/**
 * What crosses between the host and an isolate engine (in a child process over IPC, or in-process):
 * plain JSON objects, numbers and strings only. Guest text (arguments, logs, values, error info)
 * travels as the JSON text the guest made; the host parses it.
 */

/**
 * The guest code an engine installs, from `@ptc/sandbox` on the host: the engine child does not load
 * `@ptc/sandbox` itself (it starts faster without the TypeScript stripper and the rest).
 */
export interface EngineSources {
  /** `GUEST_PRELUDE`. */
  prelude: string
  /** `PROGRAM_FILENAME`. */
  programFilename: string
}

/** `FinishKind.Error` of the prelude protocol (checked against it in `host/run-host.ts`). */
export const FINISH_ERROR = 3

/** What a run needs to start in an engine. */
export interface StartInput {
  /** The wrapped program (`PreparedProgram.source`). */
  source: string
  /** The binding names, as JSON text. */
  bindingsJson: string
  memoryMib: number
  memoryBytes: number
  maxOutputBytes: number
  maxSubCalls: number
  /** An argument text longer than this is not sent to the host: its length is (see `HostCalls.start`). */
  maxArgumentChars: number
  cpuMs: number
  /** A session run: its isolate is kept in the engine after a clean end (see `SessionStart`). */
  session?: SessionStart
}

/**
 * The session part of a run's start. The engine keeps the isolate of a session run that ended
 * cleanly (its program completed, threw or did not compile) under `id`, for the next run of the
 * session; every other end disposes it.
 */
export interface SessionStart {
  /** The host's number for the session's live isolate, unique in the runtime. */
  id: number
  /** Run in the isolate kept under `id` (else in a fresh one, kept under `id` afterwards). */
  resume: boolean
  /**
   * How long, after the program's completion, the guest's leftover jobs may keep the isolate's thread
   * busy before the isolate is disposed instead of kept.
   */
  waitMs: number
}

export type ToEngine =
  | { t: 'start'; run: number; input: StartInput }
  /** A batch of `count` `SettleEntry` results for the guest, as JSON text. */
  | { t: 'settle'; run: number; batch: string; count: number }
  /** End the run now: dispose its isolate (the engine answers `ended` once nothing of it runs). */
  | { t: 'stop'; run: number }
  /** Dispose the session isolate kept under `session` (now, or at the end of the run using it). */
  | { t: 'forget'; session: number }

/** Why an engine ended a run on its own. */
export type EngineFailure =
  /** `detail`: `GuestErrorInfo` JSON of the compile error. */
  | 'syntax'
  /** `detail`: `GuestErrorInfo` JSON of a value thrown while the wrapper was evaluated. */
  | 'exception'
  | 'cpu'
  | 'memory'
  /** `detail`: a message. */
  | 'crash'

export type FromEngine =
  /** The engine (child process) loaded isolated-vm and takes runs. */
  | { t: 'ready' }
  /** `args`: the guest's argument text, or its length when over `maxArgumentChars`. */
  | { t: 'call'; run: number; id: unknown; name: unknown; args: unknown }
  | { t: 'log'; run: number; level: unknown; text: unknown }
  /**
   * `processCpuMs`, from an engine process: the CPU time the whole process had used when it answered (user +
   * system, ms), from which the host measures what it uses in its grace after the answer (`EngineChild`).
   */
  | { t: 'finish'; run: number; kind: unknown; payload: unknown; cpuMs: number; processCpuMs?: number }
  | { t: 'fail'; run: number; reason: EngineFailure; detail: string; cpuMs: number; processCpuMs?: number }
  /**
   * No guest task runs and every sub-call the guest made has its result delivered (else the guest
   * may still be woken by one); `settled` counts the `settle` batches applied so far.
   */
  | { t: 'idle'; run: number; settled: number; cpuMs: number }
  /** The guest's CPU time so far (sent while it runs, so a run the host stops still reports it). */
  | { t: 'cpu'; run: number; cpuMs: number }
  /**
   * The run's isolate is disposed (or, for a session run, kept idle) and none of its tasks runs any
   * more: it can use no more CPU. `kept`: a session run's isolate is kept, holding this many heap
   * bytes (used, garbage not yet collected included, plus external); `fresh`: it started in a new one.
   */
  | { t: 'ended'; run: number; kept?: number; fresh?: boolean }
  /** isolated-vm lost control of the run's isolate (V8 out of memory, or a failed termination). */
  | { t: 'catastrophe'; run: number; message: string }
