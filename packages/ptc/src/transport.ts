import { renderDeclarations } from '@ptc/bindings'
import type { CodeRunLimits, CodeRunResult, CodeRuntime } from '@ptc/sandbox'
import {
  RUN_CODE,
  ToolArgsError,
  type JsonSchemaNode,
  type JsonValue,
  type ObjectJsonSchema,
  type ToolDefinition,
  type ToolExecutorHost,
  type ToolRunContext,
} from '@ptc/tools'
import { DispatchLog } from './dispatch-log.js'
import { CodeRunFailedError } from './errors.js'
import { renderRunText } from './render.js'
import { SubCallScheduler, type Binding } from './scheduler.js'

/** What the transport needs from the executor's configuration. */
export interface TransportConfig {
  readonly runtime: CodeRuntime
  readonly maxParallelSubCalls: number
  readonly limits: Partial<CodeRunLimits>
  /** The largest `timeoutMs` a program may ask for (the run's wall ceiling). */
  readonly maxTimeoutMs: number
  /** How long in-flight sub-calls may take to settle after the program ended before they are abandoned. */
  readonly drainGraceMs: number
}

/** Validated `run_code` arguments. */
export interface RunCodeArgs {
  readonly code: string
  readonly description: string
  readonly timeoutMs?: number
}

export const RUN_CODE_PARAMETERS: ObjectJsonSchema = {
  type: 'object',
  properties: {
    code: {
      type: 'string',
      description: 'The body of an async function in JavaScript or TypeScript. Use await and return at top level; call tools as `await tools.name(args)`.',
    },
    description: { type: 'string', description: 'A short label of what the program does, shown to the user.' },
    timeoutMs: { type: 'integer', description: 'Optional wall-clock limit for this program in milliseconds.' },
  },
  required: ['code', 'description'],
  additionalProperties: false,
}

/** The canonical value of a run: `{ logs, result? }`. */
const RUN_CODE_OUTPUT: JsonSchemaNode = {
  type: 'object',
  properties: { logs: { type: 'array', items: { type: 'string' } }, result: {} },
  required: ['logs'],
  additionalProperties: false,
}

export const RUN_CODE_DESCRIPTION =
  'Run a short JavaScript/TypeScript program in a sandbox. Inside it every tool is an async function on `tools` ' +
  '(see the SDK declarations). Only what the program prints with console.log or returns comes back to you.'

/** Check `run_code` arguments with specific messages; every problem is listed. */
export function parseRunCodeArgs(args: unknown, maxTimeoutMs: number): RunCodeArgs {
  const problems: { path: string; message: string }[] = []
  const a = (typeof args === 'object' && args !== null && !Array.isArray(args) ? args : {}) as Record<string, unknown>
  if (a !== args) problems.push({ path: '', message: 'arguments must be an object { code, description, timeoutMs? }' })
  if (typeof a.code !== 'string') problems.push({ path: '/code', message: a.code === undefined ? 'is required' : 'must be a string of program text' })
  else if (a.code.trim() === '') problems.push({ path: '/code', message: 'is empty' })
  if (typeof a.description !== 'string') problems.push({ path: '/description', message: a.description === undefined ? 'is required' : 'must be a string' })
  else if (a.description.trim() === '') problems.push({ path: '/description', message: 'must not be blank: give a short label of what the program does' })
  const timeoutMs = a.timeoutMs
  if (timeoutMs !== undefined && (typeof timeoutMs !== 'number' || !Number.isInteger(timeoutMs) || timeoutMs <= 0)) {
    problems.push({ path: '/timeoutMs', message: 'must be a positive integer number of milliseconds' })
  } else if (typeof timeoutMs === 'number' && timeoutMs > maxTimeoutMs) {
    problems.push({ path: '/timeoutMs', message: `must be at most ${maxTimeoutMs} ms` })
  }
  for (const key of Object.keys(a)) if (!(key in (RUN_CODE_PARAMETERS.properties ?? {}))) problems.push({ path: `/${key}`, message: 'is not a run_code argument' })
  if (problems.length > 0) {
    throw new ToolArgsError(`invalid run_code arguments: ${problems.map((p) => `${p.path || '(root)'} ${p.message}`).join('; ')}`, problems)
  }
  return { code: a.code as string, description: a.description as string, ...(typeof timeoutMs === 'number' && { timeoutMs }) }
}

/**
 * Freeze the bindings of a run: the scope's visible, admitted tools (never the transport). The host hands
 * out each registration's view, whose `parameters` is the frozen copy taken at registration, so every
 * sub-call's `schema` is what `schemas()` declares.
 */
export function buildBindings(host: ToolExecutorHost, ctx: Pick<ToolRunContext, 'agent' | 'toolSet'>): Map<string, Binding> {
  const bindings = new Map<string, Binding>()
  for (const definition of host.definitions(ctx.agent, ctx.toolSet)) {
    // Without a step set, definitions() also lists conditional registrations, which cannot execute.
    if (definition.name === RUN_CODE || host.executable(definition.name, ctx.agent, ctx.toolSet) !== definition) continue
    const schema = Object.freeze({ name: definition.name, description: definition.description, parameters: definition.parameters })
    bindings.set(definition.name, Object.freeze({ definition, schema }))
  }
  return bindings
}

/**
 * The SDK declarations of a set of definitions, as the model reads them. `describe()` is given the
 * registrations' views: `parameters` and `output.schema` are the frozen copies taken at registration.
 */
export function declarationsOf(definitions: readonly ToolDefinition[]): string {
  return renderDeclarations(
    definitions.filter((d) => d.name !== RUN_CODE).map((d) => ({ name: d.name, description: d.description, parameters: d.parameters, output: d.output.schema })),
  )
}

/** The `run_code` transport definition, bound to one host. */
export function createRunCodeTool(host: ToolExecutorHost, config: TransportConfig): ToolDefinition {
  return Object.freeze({
    name: RUN_CODE,
    description: RUN_CODE_DESCRIPTION,
    parameters: RUN_CODE_PARAMETERS,
    output: Object.freeze({
      schema: RUN_CODE_OUTPUT,
      render: (_args: unknown, value: JsonValue) => {
        const v = value as { logs: string[]; result?: JsonValue }
        return [{ type: 'text' as const, text: renderRunText(v.logs, v.result) }]
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
      const bindings = buildBindings(host, ctx)
      const log = new DispatchLog(host, ctx, ctx.agent?.session)
      const scheduler = new SubCallScheduler(host, ctx, bindings, config.maxParallelSubCalls, log, config.drainGraceMs)
      let run: CodeRunResult | undefined
      try {
        run = await config.runtime.run({
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
      if (run.error !== undefined) throw new CodeRunFailedError(run.error.kind, run.error.message, run.logs)
      return run.value === undefined ? { logs: run.logs } : { logs: run.logs, result: run.value }
    },
  } satisfies ToolDefinition)
}
