/**
 * The `run_code` tool: a program's arguments checked, its bindings frozen, the run on the sandbox
 * runtime with each guest call submitted to the run's sub-call scheduler, and the outcome rendered.
 */
import type { CodeRunLimits, CodeRunResult, CodeRuntime } from '@ptc/sandbox'
import {
  RUN_CODE,
  textHead,
  type JsonSchemaNode,
  type JsonValue,
  type ToolDefinition,
  type ToolExecutorServices,
  type ToolRunContext,
} from '@ptc/tools'
import { reportLogFailure, type LogFailure } from '@ptc/tools/executor'
import { answered } from './answered.js'
import { buildBindings } from './bindings.js'
import { DispatchLog } from './dispatch-log.js'
import { renderRunText } from './render.js'
import { failure, LogStream, within, type BackgroundPlace, type LongRuns } from './long-runs.js'
import {
  parseRunCodeArgs,
  RUN_CODE_DESCRIPTION,
  RUN_CODE_LONG_PARAMETERS,
  RUN_CODE_PARAMETERS,
} from './run-code-args.js'
import { SubCallScheduler } from './scheduler.js'
import type { LogLimits } from './log-limits.js'
import type { AwaitingApproval, DurableRuns } from './durable.js'

/** What the transport needs from the executor's configuration. */
export interface TransportConfig {
  readonly runtime: CodeRuntime
  readonly maxParallelSubCalls: number
  /** See `PtcExecutorOptions.maxForwardedChars`. */
  readonly maxForwardedChars: number
  readonly limits: Partial<CodeRunLimits>
  /** The largest `timeoutMs` a program may ask for (the run's wall ceiling). */
  readonly maxTimeoutMs: number
  /** How long in-flight sub-calls may take to settle after the program ended before they are abandoned. */
  readonly drainGraceMs: number
  /** What the session log keeps of sub-calls' values (see `PtcExecutorOptions.logLimits`); `undefined`: all. */
  readonly logLimits: LogLimits | undefined
  /** The sandbox session of a call (see `PtcExecutorOptions.sessions`); absent: sessions are off. */
  readonly sessionKey?: (ctx: ToolRunContext) => string | undefined
  /** Long runs (see `PtcExecutorOptions.longRuns`); absent: every call waits for its program's end. */
  readonly longRuns?: LongRuns
  /** Durable approval (see `PtcExecutorOptions.durable`); absent: a deferred approval denies the call. */
  readonly durable?: DurableRuns
}

/** The canonical value of a run: `{ logs, result? }`. */
const RUN_CODE_OUTPUT: JsonSchemaNode = {
  type: 'object',
  properties: {
    logs: { type: 'array', items: { type: 'string' } },
    result: {},
    session: { type: 'string' },
    running: { type: 'string' },
    awaiting: {},
  },
  required: ['logs'],
  additionalProperties: false,
}

/** The `run_code` transport definition, bound to one executor's services. */
export function createRunCodeTool(services: ToolExecutorServices, config: TransportConfig): ToolDefinition {
  return Object.freeze({
    name: RUN_CODE,
    description: RUN_CODE_DESCRIPTION,
    parameters: config.longRuns === undefined ? RUN_CODE_PARAMETERS : RUN_CODE_LONG_PARAMETERS,
    output: Object.freeze({
      schema: RUN_CODE_OUTPUT,
      render: (_args: unknown, value: JsonValue) => runCodeContent(value),
    }),
    presentCall: (args: unknown) => {
      const a = (typeof args === 'object' && args !== null ? args : {}) as { code?: unknown; description?: unknown }
      return {
        card: 'generic' as const,
        kind: 'execute' as const,
        title: typeof a.description === 'string' && a.description.trim() !== '' ? a.description : RUN_CODE,
        rawInput: typeof a.code === 'string' ? a.code : null,
      }
    },
    execute: async (args: unknown, ctx: ToolRunContext): Promise<JsonValue> => {
      const longRuns = config.longRuns
      const parsed =
        longRuns === undefined
          ? parseRunCodeArgs(args, config.maxTimeoutMs)
          : parseRunCodeArgs(args, config.maxTimeoutMs, { wait: true })
      const outcome = (run: CodeRunResult, logs: string[] | undefined): JsonValue => {
        // The call that returns the outcome (this one, or a long run's last wait) is the one whose batch fails.
        const logFailure = logFailures.get(run)
        if (logFailure !== undefined && ctx.agent?.session !== undefined)
          reportLogFailure(ctx.agent.session, ctx.callId, logFailure.error)
        return config.durable?.awaitingOf(run, logs) ?? ended(run, logs)
      }
      if ('wait' in parsed) return (longRuns as LongRuns).wait(parsed.wait, ctx, (run, logs) => outcome(run, logs))
      const { code, timeoutMs } = parsed
      const session = config.sessionKey?.(ctx)
      if (session !== undefined && (typeof session !== 'string' || session === '')) {
        throw new TypeError(
          `the sessions.key function returned ${JSON.stringify(session)}: a session key is a non-empty string (or undefined for none)`,
        )
      }
      const bindings = buildBindings(services, ctx)
      const log = new DispatchLog(services, ctx, ctx.agent?.session, config.logLimits)
      // A program in a sandbox session suspends with its session's state, and holds the session for its resume.
      const numbering = { count: 0 }
      const durable = config.durable?.begin(ctx, numbering)
      // A program that may go on in the background has a signal of its own: the call's aborts it only
      // while the call waits for it. What its sub-calls bring along goes with the part returned next.
      const stream = longRuns === undefined ? undefined : new LogStream()
      const scheduler = new SubCallScheduler(
        services,
        stream?.context(ctx) ?? ctx,
        bindings,
        config.maxParallelSubCalls,
        log,
        config.drainGraceMs,
        {
          numbering,
          durable: { deferrable: durable !== undefined },
          maxValueChars: config.limits.maxResultChars ?? config.runtime.limits.maxResultChars,
          maxForwardedChars: config.maxForwardedChars,
        },
      )
      const controller = longRuns === undefined ? undefined : new AbortController()
      const forward = (): void => controller?.abort(ctx.signal.reason)
      if (controller !== undefined) {
        if (ctx.signal.aborted) forward()
        else ctx.signal.addEventListener('abort', forward, { once: true })
      }
      const done = (async (): Promise<CodeRunResult> => {
        let run: CodeRunResult | undefined
        try {
          const limits = timeoutMs === undefined ? config.limits : { ...config.limits, wallMs: timeoutMs }
          const running = config.runtime.run({
            ...(session !== undefined && { session }),
            // Each agent's programs queue apart: one agent's flood delays another's program by about one run.
            ...(ctx.agent !== undefined && { tenant: ctx.agent.id }),
            ...(durable !== undefined && { durable }),
            ...(stream !== undefined && { onLog: (text: string) => stream.push(text) }),
            code,
            language: 'typescript',
            bindings: [...bindings.keys()],
            call: (name, callArgs) => scheduler.submit(name, callArgs),
            limits,
            signal: controller?.signal ?? ctx.signal,
          })
          const wallMs = limits.wallMs ?? config.runtime.limits.wallMs
          run = await answered(running, wallMs, config.runtime.name, (why) => controller?.abort(why))
          return run
        } finally {
          let logFailure = await scheduler.close(run?.error?.kind === 'timeout')
          if (run !== undefined && durable !== undefined)
            logFailure = (await config.durable?.suspended(run, durable.key, log)) ?? logFailure
          if (run !== undefined && logFailure !== undefined) logFailures.set(run, logFailure)
        }
      })()
      if (longRuns === undefined || stream === undefined) return outcome(await done, undefined)
      const place = longRuns.place()
      try {
        const ended = place !== undefined ? await within(done, longRuns.returnAfterMs, ctx.signal) : await done
        // Aborted while waiting: the program stops, and the call reports how it ended.
        const last = ended ?? (ctx.signal.aborted ? await done : undefined)
        stream.forward(ctx)
        if (last !== undefined) return outcome(last, stream.take())
        return { logs: stream.take(), running: (place as BackgroundPlace).adopt(ctx, done, stream) }
      } finally {
        place?.free()
        ctx.signal.removeEventListener('abort', forward)
      }
    },
  } satisfies ToolDefinition)
}

/** Runs some of whose sub-dispatch events could not be written to the session: the first failure. */
const logFailures = new WeakMap<CodeRunResult, LogFailure>()

/** The content of a `run_code` value: its logs and result, or the part of a program still running or awaiting approval. */
export function runCodeContent(value: JsonValue): [{ type: 'text'; text: string }] {
  const v = value as unknown as {
    logs: string[]
    result?: JsonValue
    session?: string
    running?: string
    awaiting?: AwaitingApproval
  }
  let text =
    v.awaiting !== undefined
      ? [...v.logs, awaitingText(v.awaiting)].join('\n')
      : v.running === undefined
        ? renderRunText(v.logs, v.result)
        : [...v.logs, stillRunning(v.running)].join('\n')
  if (v.session !== undefined) text = `[sandbox session: ${v.session}]\n${text}`
  return [{ type: 'text', text }]
}

/**
 * The most characters of one awaited call's arguments the model reads again (the value keeps them whole, for
 * the person who decides): the program chose them, up to its memory.
 */
const AWAITED_ARGUMENTS_CHARS = 1024

/**
 * The most characters of awaited calls the model reads in all: a program may wait on up to
 * `maxPendingSubCalls` of them at once (256 by default), which would be a quarter of a million characters.
 */
const AWAITED_CALLS_CHARS = 16 * 1024

/** The line that ends the part of a program that suspended awaiting approval. */
function awaitingText(awaiting: AwaitingApproval): string {
  const calls: string[] = []
  let chars = 0
  for (const c of awaiting.calls) {
    if (chars >= AWAITED_CALLS_CHARS) {
      const more = awaiting.calls.length - calls.length
      calls.push(`and ${more} more call${more === 1 ? '' : 's'}`)
      break
    }
    const args = JSON.stringify(c.arguments)
    const shown =
      args.length <= AWAITED_ARGUMENTS_CHARS
        ? args
        : `${textHead(args, AWAITED_ARGUMENTS_CHARS)}… (${args.length} characters)`
    const call = `tools.${c.tool}(${shown})${c.reason === undefined ? '' : ` (${c.reason})`}`
    calls.push(call)
    chars += call.length
  }
  return `(the program is waiting for approval of ${calls.join(', ')}; it continues where it waited once the user has decided — nothing to do until then)`
}

/** The value of an ended run (its failure thrown as `CodeRunFailedError`); `logs`: the part's own entries when given. */
function ended(run: CodeRunResult, logs: string[] | undefined): JsonValue {
  const entries = logs ?? run.logs
  if (run.error !== undefined) throw failure(run, entries)
  // What the model must know about its session: state it expected is gone, or this run's was not kept.
  const notice = run.session?.note
  return {
    logs: entries,
    ...(run.value !== undefined && { result: run.value }),
    ...(notice !== undefined && { session: notice }),
  }
}

/** The line that ends a part of a program still running. */
function stillRunning(handle: string): string {
  return `(the program is still running: call run_code with { "wait": "${handle}", "description": "…" } for its next output and its result)`
}
