import { jsonSchema, tool, type Tool } from 'ai'
import type { JSONSchema7 } from '@ai-sdk/provider'
import type {
  Agent,
  ContentBlock,
  ResolvedToolSet,
  ScopeKey,
  ToolBatchResult,
  ToolCallBlock,
  ToolsView,
} from '@ptc/tools'
import { aiSdkDeferral, TOOL_SEARCH_KEY } from './tool-search.js'

/** Options of {@link toAiSdkTools}. */
export interface ToAiSdkToolsOptions {
  /** The agent (scope) calls run as; default: the view's scope. Give it a session to log calls. */
  readonly agent?: Agent
  /** The step's resolved tool set (needed for conditional tools). */
  readonly toolSet?: ResolvedToolSet
  /** Fallback cancellation when the AI SDK passes no `abortSignal`. */
  readonly signal?: AbortSignal
  /** With it (and an agent with a session), `tool/call` and `tool/result` events are appended. */
  readonly log?: { readonly turn: number; readonly step: number }
  /**
   * Who answers a policy's `ask` about a call the model makes (`run_code` itself, or a native tool):
   * - `'service'` (default): the `ToolsService`'s approval service, while the call runs, on every major.
   * - `'ai-sdk'`: the AI SDK's own tool approval (ai 6 and 7): each tool's `needsApproval` runs the scope's
   *   policies (`preflight`) and asks for approval exactly when they answer `ask`; `generateText` then stops
   *   with a `tool-approval-request`, and once your `tool-approval-response` approves it the call runs
   *   without the approval service (a `deny` or a guard still refuses it). Keep using the same tools object
   *   for the continuation: a call approved through another one goes to the approval service. ai 5 has no
   *   tool approval and ignores `needsApproval`: there the approval service answers, as with `'service'`.
   * An `ask` about a program's sub-call always goes to the approval service: a running program cannot wait
   * for the AI SDK's next call.
   */
  readonly approval?: 'service' | 'ai-sdk'
  /**
   * Tools to declare deferred (loaded only when a tool search finds them); needs `toolSearch`. `true`: all but
   * `alwaysLoaded`; a function: the tools whose name it answers `true` for, `alwaysLoaded` excepted.
   */
  readonly deferLoading?: boolean | ((name: string) => boolean)
  /** Names never deferred (the tools an author marked always-loaded): ptc names, as registered (`fs.read`). */
  readonly alwaysLoaded?: readonly string[]
  /**
   * The search tool that finds the deferred tools, added to `tools` as `tool_search`:
   * - the provider's (ai 6 and 7): `anthropic.tools.toolSearchBm25_20251119()` or `…Regex_20251119()` from
   *   `@ai-sdk/anthropic` 3, `openai.tools.toolSearch()` from `@ai-sdk/openai` 3.0.46+. Deferred tools get
   *   `providerOptions.<provider>.deferLoading`; the provider's API searches them.
   * - ai 7's `toolSearch()`, with any provider: deferred tools get ai 7's `deferLoading`; the AI SDK searches
   *   them and declares the matches from the next step on.
   */
  readonly toolSearch?: Tool
}

/** The AI SDK's tool-result output (what `toModelOutput` returns). */
type ToolResultOutput = Awaited<ReturnType<NonNullable<Tool<unknown, PtcToolOutput>['toModelOutput']>>>

/** What an AI SDK tool built by {@link toAiSdkTools} returns: the pipeline's model content. */
export interface PtcToolOutput {
  readonly content: ContentBlock[]
}

/** AI SDK tools for a scope, and the instructions (the PTC SDK text) to pass as `system` / `instructions`. */
export interface AiSdkTools {
  readonly tools: Record<string, Tool<unknown, PtcToolOutput>>
  readonly instructions: string
}

/**
 * The scope's model input as AI SDK tools: `run_code` in code mode (plus the
 * native tools in both mode, or only the natives under the native executor).
 * The AI SDK starts every tool call of a model step at once; here the calls
 * started in the same event-loop turn become one `tools.execute({ calls })`
 * batch, so the executor schedules them together as it would the step's calls
 * from any other harness: a tool that is not concurrency-safe never overlaps
 * another call, and the whole pipeline (policy, guards, approval, logging)
 * applies. A failed call throws its `Error: …` text, which the AI SDK reports
 * to the model as a tool error. With `deferLoading`, the tools it picks are
 * marked deferred for `toolSearch`, which is added as `tool_search`.
 * @throws TypeError naming the option to change when an option is malformed
 */
export function toAiSdkTools(tools: ToolsView, options: ToAiSdkToolsOptions = {}): AiSdkTools {
  const approval = options.approval ?? 'service'
  if (approval !== 'service' && approval !== 'ai-sdk')
    throw new TypeError(`approval must be 'service' or 'ai-sdk', not ${JSON.stringify(approval)}`)
  const scope: ScopeKey | undefined = options.agent ?? tools.scope
  const input = tools.modelInput(scope, options.toolSet)
  const deferral = aiSdkDeferral(
    options,
    input.schemas.map((s) => s.name),
  )
  const step = new StepBatcher(tools, options)
  // Calls whose needsApproval said yes, by id, name and input: the AI SDK runs one only once its approval was
  // granted. A later call that reuses an id (some providers number calls per response) is not taken for it.
  const asked = new BoundedSet(10_000)
  const askKey = (toolCallId: string, name: string, args: unknown): string =>
    JSON.stringify([toolCallId, name, args ?? {}])
  const out: Record<string, Tool<unknown, PtcToolOutput>> = {}
  for (const schema of input.schemas) {
    const needsApproval = async (args: unknown, { toolCallId }: { toolCallId: string }): Promise<boolean> => {
      const { agent, toolSet } = options
      const decision = await tools.preflight({
        callId: toolCallId,
        name: schema.name,
        arguments: args ?? {},
        ...(agent !== undefined && { agent }),
        ...(toolSet !== undefined && { toolSet }),
      })
      const key = askKey(toolCallId, schema.name, args)
      if (decision.kind !== 'ask') {
        asked.take(key)
        return false
      }
      asked.add(key)
      return true
    }
    out[schema.name] = tool<unknown, PtcToolOutput>({
      description: schema.description,
      inputSchema: inputSchema(schema.parameters as JSONSchema7),
      ...deferral.mark(schema.name),
      ...(approval === 'ai-sdk' && { needsApproval }),
      execute: async (args, { toolCallId, abortSignal }) => {
        const call: ToolCallBlock = {
          type: 'tool_call',
          id: toolCallId,
          name: schema.name,
          arguments: JSON.stringify(args ?? {}),
        }
        const { batch, last } = await step.submit(
          call,
          abortSignal ?? options.signal ?? new AbortController().signal,
          asked.take(askKey(toolCallId, schema.name, args)),
        )
        const result = batch.results.find((r) => r.callId === toolCallId)?.result
        if (result === undefined) throw new Error(`no result for ${schema.name}`)
        // A batch's additional context (no AI SDK counterpart) follows the result of its last call.
        const content = last
          ? [...result.content, ...batch.additionalContexts.flatMap((m) => m.content)]
          : result.content
        if (result.isError) throw new Error(textOf(content).replace(/^Error: /, ''))
        return { content }
      },
      // ai 6 and 7 pass `{ toolCallId, input, output }` and take images as `image-data`; ai 5 passes the output
      // itself and takes images as `media`.
      toModelOutput: (options: { output: PtcToolOutput } | PtcToolOutput) =>
        'content' in options ? (toModelOutput(options, 'media') as ToolResultOutput) : toModelOutput(options.output),
    })
  }
  // The record is typed for ptc's tools; the search tool, the caller's own, goes in as it is.
  if (deferral.searchTool !== undefined) out[TOOL_SEARCH_KEY] = deferral.searchTool as Tool<unknown, PtcToolOutput>
  return { tools: out, instructions: input.sections.map((s) => s.text).join('\n\n') }
}

/**
 * The AI SDK schema of a tool's parameters, in a form every major (5, 6, 7) accepts: ai 6's `jsonSchema()` object
 * also marked as a validator, which ai 5 requires (without it, ai 5 failed every call with "value is not a
 * function"). Its validation passes every value through: the pipeline validates each call itself.
 */
function inputSchema(parameters: JSONSchema7): ReturnType<typeof jsonSchema<unknown>> {
  const schema = jsonSchema<unknown>(parameters, { validate: (value) => ({ success: true, value }) })
  Object.defineProperty(schema, VALIDATOR, { value: true, enumerable: false })
  return schema
}

/** The mark of an AI SDK validator (`Symbol.for('vercel.ai.validator')` in every major). */
const VALIDATOR = Symbol.for('vercel.ai.validator')

/** Ids remembered up to a cap, the oldest forgotten first (approvals the user never answered). */
class BoundedSet {
  readonly #ids = new Set<string>()
  constructor(private readonly max: number) {}
  add(id: string): void {
    this.#ids.delete(id)
    this.#ids.add(id)
    if (this.#ids.size > this.max) this.#ids.delete(this.#ids.values().next().value as string)
  }
  /** Whether `id` was there; it is not any more. */
  take(id: string): boolean {
    return this.#ids.delete(id)
  }
}

interface Submitted {
  readonly call: ToolCallBlock
  readonly approved: boolean
  readonly signal: AbortSignal
  resolve(outcome: { batch: ToolBatchResult; last: boolean }): void
  reject(error: unknown): void
}

/**
 * Collects the calls submitted in one event-loop turn (the AI SDK starts a step's calls together,
 * each after validating its input) and executes them as one batch after that turn.
 */
class StepBatcher {
  #pending: Submitted[] = []

  constructor(
    private readonly tools: ToolsView,
    private readonly options: ToAiSdkToolsOptions,
  ) {}

  submit(
    call: ToolCallBlock,
    signal: AbortSignal,
    approved: boolean,
  ): Promise<{ batch: ToolBatchResult; last: boolean }> {
    return new Promise((resolve, reject) => {
      if (this.#pending.length === 0) setImmediate(() => void this.#flush())
      this.#pending.push({ call, approved, signal, resolve, reject })
    })
  }

  async #flush(): Promise<void> {
    const submitted = this.#pending
    this.#pending = []
    const signals = [...new Set(submitted.map((s) => s.signal))]
    const { options } = this
    const approved = submitted.filter((s) => s.approved).map((s) => s.call.id)
    try {
      const batch = await this.tools.execute({
        calls: submitted.map((s) => s.call),
        signal: signals.length === 1 ? (signals[0] as AbortSignal) : AbortSignal.any(signals),
        ...(options.agent !== undefined && { agent: options.agent }),
        ...(options.toolSet !== undefined && { toolSet: options.toolSet }),
        ...(options.log !== undefined && { log: options.log }),
        ...(approved.length > 0 && { approved }),
      })
      submitted.forEach((s, i) => s.resolve({ batch, last: i === submitted.length - 1 }))
    } catch (error) {
      for (const s of submitted) s.reject(error)
    }
  }
}

/**
 * Text-only content as one text output; with images, a content output (image parts as `image-data`, the
 * part ai 6 and 7 take; `media` for ai 5).
 */
export function toModelOutput(
  output: PtcToolOutput,
  imagePart: 'image-data' | 'media' = 'image-data',
): ToolResultOutput {
  if (output.content.every((b) => b.type === 'text')) return { type: 'text', value: textOf(output.content) }
  return {
    type: 'content',
    value: output.content.map((b) =>
      b.type === 'text'
        ? { type: 'text' as const, text: b.text }
        : { type: imagePart as 'image-data', data: b.data, mediaType: b.mimeType },
    ),
  }
}

function textOf(content: readonly ContentBlock[]): string {
  return content
    .filter((b) => b.type === 'text')
    .map((b) => b.text)
    .join('\n')
}
