/**
 * The `run_code` tool: a program's arguments checked, its bindings frozen, the run on the sandbox
 * runtime with each guest call submitted to the run's sub-call scheduler, and the outcome rendered.
 */
import type { CodeRunResult } from '@ptc/sandbox'
import {
  RUN_CODE,
  type JsonSchemaNode,
  type JsonValue,
  type ToolDefinition,
  type ToolExecutorServices,
  type ToolRunContext,
} from '@ptc/tools'
import { reportLogFailure, type LogFailure } from '@ptc/tools/executor'
import { answered } from './answered.js'
import type { AwaitingApproval } from './durable/awaiting.js'
import type { DurableRuns } from './durable/runs.js'
import { failure, LogStream, within, type BackgroundPlace, type LongRuns } from './long-runs.js'
import * as messages from './messages.js'
import { renderRunText } from './render.js'
import { setUpRun, type RunConfig } from './run-setup.js'
import {
  parseRunCodeArgs,
  RUN_CODE_DESCRIPTION,
  RUN_CODE_LONG_PARAMETERS,
  RUN_CODE_PARAMETERS,
} from './run-code-args.js'

/** What the transport needs from the executor's configuration: what runs a program, and the optional modes. */
export interface TransportConfig extends RunConfig {
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
      const session = sessionOf(config, ctx)
      // A program in a sandbox session suspends with its session's state, and holds the session for its resume.
      const numbering = { count: 0 }
      const durable = config.durable?.begin(ctx, numbering)
      // A program that may go on in the background has a signal of its own: the call's aborts it only
      // while the call waits for it. What its sub-calls bring along goes with the part returned next.
      const stream = longRuns === undefined ? undefined : new LogStream()
      const { bindings, log, scheduler, trace } = setUpRun(services, ctx, config, {
        traced: true,
        numbering,
        durable: { deferrable: durable !== undefined },
        maxValueChars: config.limits.maxResultChars ?? config.runtime.limits.maxResultChars,
        ...(stream !== undefined && { context: stream.context(ctx) }),
      })
      const controller = longRuns === undefined ? undefined : new AbortController()
      const forward = (): void => controller?.abort(ctx.signal.reason)
      if (controller !== undefined) {
        if (ctx.signal.aborted) forward()
        else ctx.signal.addEventListener('abort', forward, { once: true })
      }
      const done = (async (): Promise<CodeRunResult> => {
        let run: CodeRunResult | undefined
        let thrown: unknown
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
        } catch (error) {
          thrown = error
          throw error
        } finally {
          try {
            let logFailure = await scheduler.close(run?.error?.kind === 'timeout')
            if (run !== undefined && durable !== undefined)
              logFailure = (await config.durable?.suspended(run, durable.key, log)) ?? logFailure
            if (run !== undefined && logFailure !== undefined) logFailures.set(run, logFailure)
          } finally {
            trace?.end(run, thrown)
          }
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

/** The sandbox session of `ctx`'s program (see `PtcExecutorOptions.sessions`), checked. */
function sessionOf(config: TransportConfig, ctx: ToolRunContext): string | undefined {
  const session = config.sessionKey?.(ctx)
  if (session !== undefined && (typeof session !== 'string' || session === '')) {
    throw new TypeError(
      `the sessions.key function returned ${JSON.stringify(session)}: ` +
        'a session key is a non-empty string (or undefined for none)',
    )
  }
  return session
}

/**
 * The content of a `run_code` value: its logs and result, or the part of a program still running or awaiting
 * approval.
 */
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
      ? [...v.logs, messages.awaitingApproval(v.awaiting.calls)].join('\n')
      : v.running === undefined
        ? renderRunText(v.logs, v.result)
        : [...v.logs, messages.stillRunning(v.running)].join('\n')
  if (v.session !== undefined) text = `[sandbox session: ${v.session}]\n${text}`
  return [{ type: 'text', text }]
}

/**
 * The value of an ended run (its failure thrown as `CodeRunFailedError`); `logs`: the part's own entries when
 * given.
 */
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
