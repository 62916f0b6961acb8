import { randomUUID } from 'node:crypto'
import type { CodeRunLimits, CodeRuntime } from '@ptc/sandbox'
import { SESSION_GUIDANCE } from '@ptc/sandbox/session'
import {
  createNativeExecutor,
  RUN_CODE,
  type ToolDefinition,
  type ToolExecutor,
  type ToolModelInput,
  type ToolPromptSection,
  type ToolExecutorServices,
  type ToolResumeInput,
  type ToolRunContext,
  type ToolSchema,
} from '@ptc/tools'
import { checkDrainGrace } from '@ptc/tools/executor'
import { declarationsOf, rememberedDeclarations } from './bindings.js'
import { LongRuns, type LongRunOptions } from './long-runs.js'
import { RUN_CODE_DESCRIPTION, RUN_CODE_LONG_PARAMETERS, RUN_CODE_PARAMETERS } from './run-code-args.js'
import { routeHostedPrograms } from './hosted.js'
import { createRunCodeTool, runCodeContent } from './transport.js'
import { DEFAULT_MAX_FORWARDED_CHARS } from './scheduler/forwarding.js'
import { Tracing, type PtcTracingOptions } from './tracing.js'
import type { DurableOptions } from './durable/options.js'
import { DurableRuns } from './durable/runs.js'
import { resolveLogLimits, type LogLimits } from './log-limits.js'
import { SDK_GUIDANCE } from './guidance.js'
import { longRunsGuidance } from './messages.js'
import type { RunConfig } from './run-setup.js'
import { resolveDiscovery, SEARCH_TOOLS, type DiscoveryOptions, type ResolvedDiscovery } from './discovery/options.js'
import { declarationsBlock, rememberedSections, type SdkSection } from './discovery/sdk-section.js'
import { createSearchTool, SEARCH_TOOLS_DESCRIPTION, SEARCH_TOOLS_PARAMETERS } from './discovery/search-tool.js'

export interface PtcExecutorOptions {
  /** The sandbox backend programs run in. */
  runtime: CodeRuntime
  /** `code` (default): the model sees only `run_code`; `both`: native tools plus `run_code`. */
  mode?: 'code' | 'both'
  /** Concurrency-safe sub-calls that may overlap within one run (default 10). */
  maxParallelSubCalls?: number
  /** Cap of the rolling pool of model-direct calls in a batch (default 10). */
  maxParallelToolCalls?: number
  /**
   * The most characters (JSON text; an image counts its base64 data and 40 for its block) of images and deferred
   * contexts the tool calls of one program may bring along with its `run_code` result (default
   * `DEFAULT_MAX_FORWARDED_CHARS`, 8 Mi: about 6 MB of images). Each goes whole or not at all; what does not fit
   * is left out, and a note says how much.
   */
  maxForwardedChars?: number
  /**
   * Limits of every run, over the runtime's own (`runtime.limits`); a program's `timeoutMs` replaces
   * `wallMs`, up to this ceiling (the runtime's `wallMs` when this sets none). A runtime that has not
   * answered `RUNTIME_ANSWER_GRACE_MS` (5 s, or the wall again when longer) after a run's wall ended is a
   * fault: `run_code` (and `tools.resume`, after this ceiling) gives the run up as a `timeout` that says so,
   * and never waits longer.
   */
  limits?: Partial<CodeRunLimits>
  /**
   * How long (ms, default 100) calls still in flight may take to settle once they were told to stop before
   * they are abandoned. When a program ends (returned, failed, timed out, aborted) its in-flight sub-calls are
   * aborted; one whose body ignores the signal and has not settled within this grace is recorded as abandoned
   * (its `tool/ptc-dispatch` event is an `isError` `TOOL_TIMEOUT` or `ABORTED` with `abandoned: true`) and
   * `run_code` returns; the body is still awaited and its eventual outcome is logged as
   * `tool/ptc-dispatch-late`. The same grace bounds model-direct calls (see `NativeExecutorOptions`).
   *
   * It also applies while the program runs: a sub-call whose body was told to stop by a `tools/execute`
   * wrapper (the timeout policy's deadline passed) and that has not settled this long after is abandoned
   * at once — the program's call rejects with a `ToolCallError` ("tool call timed out after N ms and was
   * abandoned: …", code `TOOL_TIMEOUT`; `ABORTED` for another wrapper's abort) that it can catch, the
   * settle event says `abandoned: true`, and the body's eventual outcome is logged as
   * `tool/ptc-dispatch-late`. An abandoned call no longer holds the scheduler's barrier or a parallel
   * slot: later calls run while its body may still be running.
   */
  drainGraceMs?: number
  /**
   * Sandbox sessions: `run_code` programs with the same session key share state (their top-level
   * declarations and `globalThis`; see `SESSION_GUIDANCE`, which the SDK text then includes). `true`:
   * the key is the agent's session (`ctx.agent.session`, else the agent itself; a call with neither
   * runs without a session); `{ key }`: your key per call (undefined: no session). Needs a runtime that
   * keeps sessions (`runtime.endSession`: QuickJS, and isolated-vm with live isolates). Default: off,
   * every program starts from nothing.
   */
  sessions?: boolean | { key(ctx: ToolRunContext): string | undefined }
  /**
   * Long runs: a program still running after `returnAfterMs` goes on in the background and `run_code`
   * returns its output so far with a handle; `run_code({ wait: handle, description })` returns the next
   * part, and the outcome once the program ended. Its limits (wall, CPU, output, sub-calls) are the
   * one run's, over all parts. Default: off, every call waits for its program's end.
   */
  longRuns?: LongRunOptions
  /**
   * Durable approval: a sub-call whose approval the approval service answers `deferred` waits; once the
   * program waits on nothing else it suspends (its engine state sealed by the runtime, which needs the
   * same `secret` in every process that resumes it), its state goes to `store` under a token, and
   * `run_code` returns `{ logs, awaiting: { token, calls } }`. `tools.resume({ token, decision, agent,
   * signal })` continues it, here or in another process. Needs a runtime that suspends runs (QuickJS). A
   * program in a sandbox session suspends with its session's state and holds the session until it is
   * resumed (for `ttlMs`): meanwhile the session runs no other program and cannot be ended; the resumed
   * program leaves the session its state as any session program does; past `ttlMs` unresumed, the session
   * goes on from its state before that program. Default: off, a deferred approval denies the call.
   */
  durable?: DurableOptions
  /**
   * How much of its sub-calls' arguments and results' content one run writes to the session log (`LogLimits`):
   * a value up to `maxValueChars` (default 65 536) characters of JSON is kept whole while the run has logged
   * less than `maxRunChars` (default 16 MiB) of them; past either, the event keeps the value's first 256
   * characters and says in `elided: { arguments?, content? }` what it weighed and its SHA-256. A program
   * chooses how many calls it makes and with what: without a bound one run could fill the log's disk.
   * `false`: every value whole. The `tools/ptc-dispatch-log` waterfall shapes content before this.
   */
  logLimits?: Partial<LogLimits> | false
  /**
   * Tool discovery for large catalogs (default on, `budgetChars` 8 000). While the SDK section (guidance and
   * declarations) fits the budget, nothing changes. Past it, the model reads the always-loaded declarations, a
   * compact index of the catalog by namespace and how to find the rest with the built-in `search_tools` tool,
   * which the model may call directly and programs as `tools.search_tools({ query })`. `false`: every
   * declaration always, and the name `search_tools` is free for a tool of yours.
   */
  discovery?: DiscoveryOptions | false
  /**
   * OpenTelemetry traces, when `@opentelemetry/api` is installed (default on: spans go to the global tracer
   * provider, which does nothing until the harness registers one). A `run_code` call is a span
   * `execute_tool run_code`, each sub-call a child span `execute_tool {name}`, with the run's stats as attributes
   * and a durable suspension or resumption as an event; no argument or result text unless `recordContent`.
   * `false`: no spans.
   */
  tracing?: PtcTracingOptions | false
}

/**
 * The name of the SDK prompt section: the executor's own (the guidance) and each step's (guidance and
 * declarations).
 */
const SDK_SECTION = 'ptc-sdk'

/**
 * The PTC executor: runs `run_code` programs in the given runtime, where each
 * tool call is a parented sub-dispatch through the whole pipeline. Install it
 * with `tools.setExecutor(…)` (deployment default) or on a scope. Calls made by a provider-hosted program
 * (a `ToolCallBlock` with `caller`) are routed as sub-dispatches of that program (see `withHostedPrograms`).
 */
export function createPtcExecutor(options: PtcExecutorOptions): ToolExecutor {
  const { runtime } = options
  if (typeof runtime !== 'object' || runtime === null || typeof runtime.run !== 'function') {
    throw new TypeError('createPtcExecutor needs { runtime }: a CodeRuntime such as createQuickJSRuntime()')
  }
  const mode = options.mode ?? 'code'
  if (mode !== 'code' && mode !== 'both')
    throw new TypeError(`mode must be 'code' or 'both', not ${JSON.stringify(mode)}`)
  const maxParallelSubCalls = options.maxParallelSubCalls ?? 10
  if (!Number.isInteger(maxParallelSubCalls) || maxParallelSubCalls < 1)
    throw new TypeError('maxParallelSubCalls must be a positive integer')
  const maxForwardedChars = options.maxForwardedChars ?? DEFAULT_MAX_FORWARDED_CHARS
  if (!Number.isSafeInteger(maxForwardedChars) || maxForwardedChars < 0)
    throw new TypeError(`maxForwardedChars must be a non-negative integer, not ${String(maxForwardedChars)}`)
  const limits = { ...options.limits }
  // A program's timeoutMs may shorten its wall, never lengthen it past what the harness configured:
  // the executor's limits, else the runtime's own.
  const maxTimeoutMs = limits.wallMs ?? options.runtime.limits.wallMs
  const drainGraceMs = checkDrainGrace(options.drainGraceMs)
  const logLimits = resolveLogLimits(options.logLimits)
  const sessionKey = sessionKeyOf(options.sessions, runtime)
  const longRuns = options.longRuns === undefined ? undefined : new LongRuns(options.longRuns)
  const durable = options.durable === undefined ? undefined : new DurableRuns(options.durable, runtime)
  const tracing = Tracing.resolve(options.tracing)
  // What every program's run is set up with: run_code's, a resumed one's, a hosted one's.
  const config: RunConfig = {
    runtime,
    limits,
    maxTimeoutMs,
    maxParallelSubCalls,
    maxForwardedChars,
    drainGraceMs,
    logLimits,
    ...(tracing !== undefined && { tracing }),
  }
  const guidanceText = guidance(sessionKey !== undefined, longRuns)
  const native = createNativeExecutor({
    drainGraceMs,
    ...(options.maxParallelToolCalls !== undefined && { maxParallelToolCalls: options.maxParallelToolCalls }),
  })
  const declarations = rememberedDeclarations()
  const discovery = resolveDiscovery(options.discovery)
  const fullSection = (tools: readonly ToolDefinition[]): string =>
    `${guidanceText}\n\n${declarationsBlock(declarations(tools))}`
  const section = discovery === undefined ? undefined : rememberedSections(guidanceText, discovery, fullSection)
  const runCodeSchema = (): ToolSchema => ({
    name: RUN_CODE,
    description: RUN_CODE_DESCRIPTION,
    parameters: structuredClone(options.longRuns === undefined ? RUN_CODE_PARAMETERS : RUN_CODE_LONG_PARAMETERS),
  })

  const executor = Object.freeze({
    // The SDK text the executor owns whatever tools a scope sees: its guidance. A step's describe() renders
    // the whole SDK section (this guidance and the declarations of the visible tools) under the same name,
    // which supersedes this one in modelInput().
    sections: Object.freeze([Object.freeze({ name: SDK_SECTION, text: guidanceText })]),
    codeOnly: mode === 'code',
    transport: (services) =>
      createRunCodeTool(services, {
        ...config,
        ...(sessionKey !== undefined && { sessionKey }),
        ...(longRuns !== undefined && { longRuns }),
        ...(durable !== undefined && { durable }),
      }),
    describe(tools: readonly ToolDefinition[]): ToolModelInput {
      const sdk: SdkSection = section?.(tools) ?? { text: fullSection(tools), deferred: false, declared: new Set() }
      const sections: ToolPromptSection[] = [{ name: SDK_SECTION, text: sdk.text }]
      const owned = sdk.deferred ? [runCodeSchema(), searchToolsSchema()] : [runCodeSchema()]
      const ownedNames = sdk.deferred ? [RUN_CODE, SEARCH_TOOLS] : [RUN_CODE]
      if (mode === 'code') return { schemas: owned, knownNames: ownedNames, sections }
      const nativeInput = native.describe(tools)
      // Past the budget only the always-loaded tools are declared natively; the rest stay callable by name.
      const natives = sdk.deferred ? nativeInput.schemas.filter((s) => sdk.declared.has(s.name)) : nativeInput.schemas
      return { schemas: [...natives, ...owned], knownNames: [...nativeInput.knownNames, ...ownedNames], sections }
    },
    execute: (input, services) => native.execute(input, services),
    ...(discovery !== undefined && { builtins: searchBuiltins }),
    ...(durable !== undefined && {
      resume: (input: ToolResumeInput, services: ToolExecutorServices) =>
        durable.resume(input, services, config, runCodeContent),
    }),
  } satisfies ToolExecutor)
  // Calls a provider-hosted program made are sub-dispatches of that program, as a run_code program's are.
  return routeHostedPrograms(executor, config)
}

/**
 * Guidance plus the declarations of the tools a scope can see, deterministic for the same tool set; with
 * `discovery` (off unless given), past its budget, the text the PTC executor gives with that option.
 */
export function sdkText(
  tools: readonly ToolDefinition[],
  options?: { sessions?: boolean; discovery?: DiscoveryOptions | false },
): string {
  const text = guidance(options?.sessions === true, undefined)
  const full = (defs: readonly ToolDefinition[]): string => `${text}\n\n${declarationsBlock(declarationsOf(defs))}`
  const discovery: ResolvedDiscovery | undefined =
    options?.discovery === undefined ? undefined : resolveDiscovery(options.discovery)
  return discovery === undefined ? full(tools) : rememberedSections(text, discovery, full)(tools).text
}

/** The executor's own `search_tools`, one per set of services. */
const searchBuiltins = Object.freeze({
  names: Object.freeze([SEARCH_TOOLS]),
  define: (services: ToolExecutorServices) => [createSearchTool(services)],
})

function searchToolsSchema(): ToolSchema {
  return {
    name: SEARCH_TOOLS,
    description: SEARCH_TOOLS_DESCRIPTION,
    parameters: structuredClone(SEARCH_TOOLS_PARAMETERS),
  }
}

function guidance(sessions: boolean, longRuns: LongRuns | undefined): string {
  const parts = [SDK_GUIDANCE]
  if (sessions) parts.push(SESSION_GUIDANCE)
  if (longRuns !== undefined) parts.push(longRunsGuidance(longRuns.returnAfterMs))
  return parts.join('\n')
}

/** Session keys of agents (and of their sessions) by identity: an agent object is its own session. */
const agentKeys = new WeakMap<object, string>()

/** The per-call session key function of `sessions`, or undefined when sessions are off. */
function sessionKeyOf(
  sessions: PtcExecutorOptions['sessions'],
  runtime: CodeRuntime,
): ((ctx: ToolRunContext) => string | undefined) | undefined {
  if (sessions === undefined || sessions === false) return undefined
  if (typeof runtime.endSession !== 'function') {
    throw new TypeError(
      'createPtcExecutor: sessions need a runtime that keeps them (one with endSession); ' +
        `the ${runtime.name} runtime does not`,
    )
  }
  if (sessions === true) {
    return (ctx) => {
      const owner = ctx.agent?.session ?? ctx.agent
      if (owner === undefined || owner === null || typeof owner !== 'object') return undefined
      let key = agentKeys.get(owner)
      if (key === undefined) {
        key = `agent-${randomUUID()}`
        agentKeys.set(owner, key)
      }
      return key
    }
  }
  if (typeof sessions !== 'object' || sessions === null || typeof sessions.key !== 'function') {
    throw new TypeError('sessions must be true, false or { key(ctx) }')
  }
  return (ctx) => sessions.key(ctx)
}
