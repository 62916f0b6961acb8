/**
 * The `run_code` tool: a program's arguments checked, its bindings frozen, the run on the sandbox
 * runtime with each guest call submitted to the run's sub-call scheduler, and the outcome rendered.
 */
import type { CodeRunLimits, CodeRunResult, CodeRuntime } from '@ptc/sandbox'
import { RUN_CODE, type JsonSchemaNode, type JsonValue, type ToolDefinition, type ToolExecutorServices, type ToolRunContext } from '@ptc/tools'
import { buildBindings } from './bindings.js'
import { DispatchLog } from './dispatch-log.js'
import { CodeRunFailedError } from './errors.js'
import { renderRunText } from './render.js'
import { parseRunCodeArgs, RUN_CODE_DESCRIPTION, RUN_CODE_PARAMETERS } from './run-code-args.js'
import { SubCallScheduler } from './scheduler.js'

/** What the transport needs from the executor's configuration. */
export interface TransportConfig {
  readonly runtime: CodeRuntime
  readonly maxParallelSubCalls: number
  readonly limits: Partial<CodeRunLimits>
  /** The largest `timeoutMs` a program may ask for (the run's wall ceiling). */
  readonly maxTimeoutMs: number
  /** How long in-flight sub-calls may take to settle after the program ended before they are abandoned. */
  readonly drainGraceMs: number
  /** The sandbox session of a call (see `PtcExecutorOptions.sessions`); absent: sessions are off. */
  readonly sessionKey?: (ctx: ToolRunContext) => string | undefined
}

/** The canonical value of a run: `{ logs, result? }`. */
const RUN_CODE_OUTPUT: JsonSchemaNode = {
  type: 'object',
  properties: { logs: { type: 'array', items: { type: 'string' } }, result: {}, session: { type: 'string' } },
  required: ['logs'],
  additionalProperties: false,
}

/** The `run_code` transport definition, bound to one executor's services. */
export function createRunCodeTool(services: ToolExecutorServices, config: TransportConfig): ToolDefinition {
  return Object.freeze({
    name: RUN_CODE,
    description: RUN_CODE_DESCRIPTION,
    parameters: RUN_CODE_PARAMETERS,
    output: Object.freeze({
      schema: RUN_CODE_OUTPUT,
      render: (_args: unknown, value: JsonValue) => {
        const v = value as { logs: string[]; result?: JsonValue; session?: string }
        const text = renderRunText(v.logs, v.result)
        return [{ type: 'text' as const, text: v.session === undefined ? text : `[sandbox session: ${v.session}]\n${text}` }]
      },
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
      const { code, timeoutMs } = parseRunCodeArgs(args, config.maxTimeoutMs)
      const bindings = buildBindings(services, ctx)
      const log = new DispatchLog(services, ctx, ctx.agent?.session)
      const scheduler = new SubCallScheduler(services, ctx, bindings, config.maxParallelSubCalls, log, config.drainGraceMs)
      const session = config.sessionKey?.(ctx)
      if (session !== undefined && (typeof session !== 'string' || session === '')) {
        throw new TypeError(`the sessions.key function returned ${JSON.stringify(session)}: a session key is a non-empty string (or undefined for none)`)
      }
      let run: CodeRunResult | undefined
      try {
        run = await config.runtime.run({
          ...(session !== undefined && { session }),
          code,
          language: 'typescript',
          bindings: [...bindings.keys()],
          call: (name, callArgs) => scheduler.submit(name, callArgs),
          limits: timeoutMs === undefined ? config.limits : { ...config.limits, wallMs: timeoutMs },
          signal: ctx.signal,
        })
      } finally {
        await scheduler.close(run?.error?.kind === 'timeout')
      }
      // What the model must know about its session: state it expected is gone, or this run's was not kept.
      const notice = run.session?.note
      if (run.error !== undefined) {
        throw new CodeRunFailedError(run.error.kind, notice === undefined ? run.error.message : `${run.error.message} [sandbox session: ${notice}]`, run.logs)
      }
      return { logs: run.logs, ...(run.value !== undefined && { result: run.value }), ...(notice !== undefined && { session: notice }) }
    },
  } satisfies ToolDefinition)
}
