/**
 * OpenTelemetry traces of programs, when `@opentelemetry/api` (an optional peer) is installed: a `run_code` call is a
 * span, each of its sub-calls a child span, named and tagged as the GenAI semantic conventions name a tool's execution
 * (`execute_tool {gen_ai.tool.name}`). Without the API, or with `tracing: false`, nothing is traced.
 */
import { createRequire } from 'node:module'
import type * as Otel from '@opentelemetry/api'
import type { CodeRunResult } from '@ptc/sandbox'
import type { ToolExecutionResult, ToolRunContext } from '@ptc/tools'

/** How programs are traced (`PtcExecutorOptions.tracing`). */
export interface PtcTracingOptions {
  /** An OpenTelemetry `Tracer` (default: the global tracer provider's, named `@ptc/ptc`). */
  readonly tracer?: object
  /**
   * Record the program's arguments and each sub-call's arguments and result text on their spans
   * (`gen_ai.tool.call.arguments`, `gen_ai.tool.call.result`). Default false: they may hold a user's data.
   */
  readonly recordContent?: boolean
}

/** A sub-call as a trace sees it (`SubCallIdentity` of the dispatch log). */
export interface TracedCall {
  readonly subCallId: string
  readonly name: string
  readonly arguments: unknown
}

let api: typeof Otel | null | undefined

/** The OpenTelemetry API, if this process can load it. */
function otel(): typeof Otel | undefined {
  if (api === undefined) {
    try {
      api = createRequire(import.meta.url)('@opentelemetry/api') as typeof Otel
    } catch {
      api = null
    }
  }
  return api ?? undefined
}

/** The executor's tracing, resolved from its options; starts one `RunTrace` per program. */
export class Tracing {
  readonly api: typeof Otel
  readonly tracer: Otel.Tracer
  readonly recordContent: boolean

  private constructor(otelApi: typeof Otel, tracer: Otel.Tracer, recordContent: boolean) {
    this.api = otelApi
    this.tracer = tracer
    this.recordContent = recordContent
  }

  /** Undefined: nothing is traced (`false`, or no OpenTelemetry API installed). */
  static resolve(options: PtcTracingOptions | false | undefined): Tracing | undefined {
    if (options === false) return undefined
    if (options !== undefined && (typeof options !== 'object' || options === null))
      throw new TypeError('tracing must be { tracer?, recordContent? } or false')
    const found = otel()
    if (found === undefined) {
      if (options?.tracer !== undefined)
        throw new TypeError('tracing.tracer needs @opentelemetry/api: install it beside @ptc/ptc')
      return undefined
    }
    const tracer = options?.tracer ?? found.trace.getTracer('@ptc/ptc')
    if (typeof (tracer as Partial<Otel.Tracer>).startSpan !== 'function')
      throw new TypeError('tracing.tracer must be an OpenTelemetry Tracer (it has no startSpan method)')
    return new Tracing(found, tracer as Otel.Tracer, options?.recordContent === true)
  }
}

/** The span of one program's run (a `run_code` call, or its resumption) and the spans of its sub-calls. */
export class RunTrace {
  readonly #tracing: Tracing
  readonly #span: Otel.Span
  readonly #context: Otel.Context
  readonly #calls = new Map<string, Otel.Span>()
  /** The text the sub-calls' results brought into the sandbox, in characters. */
  #resultChars = 0

  constructor(tracing: Tracing, program: ToolRunContext) {
    this.#tracing = tracing
    const { api, tracer } = tracing
    const attributes: Otel.Attributes = {
      ...toolAttributes(program.name, program.callId),
      'ptc.root_call.id': program.rootCallId,
    }
    if (program.agent !== undefined) attributes['ptc.agent.id'] = program.agent.id
    if (tracing.recordContent) attributes['gen_ai.tool.call.arguments'] = JSON.stringify(program.arguments)
    this.#span = tracer.startSpan(
      `execute_tool ${program.name}`,
      { kind: api.SpanKind.INTERNAL, attributes },
      api.context.active(),
    )
    this.#context = api.trace.setSpan(api.context.active(), this.#span)
  }

  callStarted(call: TracedCall): void {
    if (!this.#span.isRecording()) return
    const attributes = toolAttributes(call.name, call.subCallId)
    if (this.#tracing.recordContent) attributes['gen_ai.tool.call.arguments'] = JSON.stringify(call.arguments)
    const { api, tracer } = this.#tracing
    const span = tracer.startSpan(
      `execute_tool ${call.name}`,
      { kind: api.SpanKind.INTERNAL, attributes },
      this.#context,
    )
    this.#calls.set(call.subCallId, span)
  }

  /** `abandoned`: the run stopped waiting for the call. */
  callSettled(call: TracedCall, result: ToolExecutionResult, abandoned: boolean): void {
    const span = this.#calls.get(call.subCallId)
    if (span === undefined) return
    this.#calls.delete(call.subCallId)
    const text = textOf(result)
    if (result.isError) {
      const code = result.error.info?.code ?? 'TOOL_ERROR'
      span.setAttribute('error.type', code)
      // Deferred for a person's approval: not a failure, the program suspends on it.
      if (code === 'APPROVAL_DEFERRED') span.setAttribute('ptc.sub_call.deferred', true)
      else span.setStatus({ code: this.#tracing.api.SpanStatusCode.ERROR, message: result.error.message })
    } else {
      this.#resultChars += text.length
    }
    if (abandoned) span.setAttribute('ptc.sub_call.abandoned', true)
    if (this.#tracing.recordContent) span.setAttribute('gen_ai.tool.call.result', text)
    span.end()
  }

  /** An abandoned call's body settled after all. */
  callLate(call: TracedCall, result: ToolExecutionResult): void {
    if (!this.#span.isRecording()) return
    this.#span.addEvent('ptc.sub_call.late', {
      'gen_ai.tool.call.id': call.subCallId,
      'gen_ai.tool.name': call.name,
      ...(result.isError && { 'error.type': result.error.info?.code ?? 'TOOL_ERROR' }),
    })
  }

  /** The program suspended awaiting approval of `awaiting` (tool names). */
  suspended(awaiting: readonly string[]): void {
    this.#span.addEvent('ptc.durable.suspend', { 'ptc.durable.awaiting': [...awaiting] })
  }

  /** The program was resumed with the people's `decisions`, in the order of the calls it awaited. */
  resumed(decisions: readonly string[]): void {
    this.#span.addEvent('ptc.durable.resume', { 'ptc.durable.decisions': [...decisions] })
  }

  /** The run ended with `run`, or threw `error` on the host. Sub-calls still open end with it. */
  end(run: CodeRunResult | undefined, error?: unknown): void {
    const span = this.#span
    if (!span.isRecording()) return
    const { SpanStatusCode } = this.#tracing.api
    if (run !== undefined) {
      span.setAttributes({
        'ptc.run.cpu_ms': run.stats.cpuMs,
        'ptc.run.wall_ms': run.stats.wallMs,
        'ptc.run.queue_ms': run.stats.queueMs,
        'ptc.run.sub_calls': run.stats.subCalls,
        'ptc.run.result_chars_in': this.#resultChars,
        'ptc.run.chars_out': returnedChars(run),
      })
      if (run.suspended !== undefined) span.setAttribute('ptc.run.suspended', true)
      if (run.error !== undefined) {
        span.setAttribute('error.type', run.error.kind)
        span.setStatus({ code: SpanStatusCode.ERROR, message: run.error.message })
      }
    } else if (error !== undefined) {
      span.setAttribute('error.type', error instanceof Error ? error.name : 'Error')
      span.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof Error ? error.message : String(error) })
    }
    for (const open of this.#calls.values()) {
      open.setAttribute('ptc.sub_call.unsettled', true)
      open.end()
    }
    this.#calls.clear()
    span.end()
  }
}

/** The GenAI semantic conventions' attributes of a tool's execution. */
function toolAttributes(name: string, callId: string): Otel.Attributes {
  return {
    'gen_ai.operation.name': 'execute_tool',
    'gen_ai.tool.name': name,
    'gen_ai.tool.call.id': callId,
    'gen_ai.tool.type': 'function',
  }
}

/** The text of a result's content blocks. */
function textOf(result: ToolExecutionResult): string {
  let text = ''
  for (const block of result.content) if (block.type === 'text') text += block.text
  return text
}

/** What the run gives back to the model: its logs and its value, in characters of text. */
function returnedChars(run: CodeRunResult): number {
  let chars = 0
  for (const line of run.logs) chars += line.length
  return run.value === undefined ? chars : chars + JSON.stringify(run.value).length
}
