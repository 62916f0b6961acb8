import { Server } from '@modelcontextprotocol/sdk/server/index.js'
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js'
import {
  CallToolRequestSchema,
  ListToolsRequestSchema,
  type CallToolResult,
  type Tool,
} from '@modelcontextprotocol/sdk/types.js'
import { createPtcExecutor, type DiscoveryOptions } from '@ptc/ptc'
import type { CodeRunLimits, CodeRuntime } from '@ptc/sandbox'
import {
  RUN_CODE,
  ToolBatchExecutionError,
  ToolsService,
  type Agent,
  type JsonValue,
  type ToolBatchResult,
  type ToolCallResult,
  type ToolRunContext,
} from '@ptc/tools'
import { toMcpContent } from '../upstream/content.js'
import { checkBound, McpServeUsageError, UpstreamUnavailableError } from '../errors.js'
import { MAX_MESSAGE_BYTES } from '../upstream/bounded-fetch.js'
import { messageOf } from '../upstream/client-errors.js'
import { argumentsTooDeep, noResult, upstreamsDown } from '../messages.js'
import { UpstreamConnection, type ReconnectOptions, type UpstreamSpec } from '../upstream/connection.js'
import { createMcpApproval, type McpApproval } from './approval.js'
import { UpstreamRegistry } from './upstream-registry.js'

export interface PtcMcpServerOptions {
  /** Upstream MCP servers whose tools become `<namespace>.<tool>`. */
  readonly upstreams: readonly UpstreamSpec[]
  /** The sandbox programs run in (the caller owns and disposes it). */
  readonly runtime: CodeRuntime
  /** `code` (default): clients see only `run_code`; `both`: the upstream tools too. */
  readonly mode?: 'code' | 'both'
  /**
   * A host's registry (with its policy, guards, approval); default: a new `ToolsService` whose approval
   * asks the calling client through elicitation (`approval`).
   */
  readonly tools?: ToolsService
  /**
   * The `McpApproval` the registry was given (`createMcpApproval()`): each call is bound to the client that
   * made it, so an `ask` reaches that client. Default: a new one, used when `tools` is not given.
   */
  readonly approval?: McpApproval
  /**
   * The agent calls run under; give it a session to log calls and sub-calls. Each client connection (an MCP
   * session) runs as its own agent, `<id>:<n>`, a child scope of this one (its registrations, restrictions,
   * executor and policies apply) sharing its session log. Default `{ id: 'ptc-serve' }`.
   */
  readonly agent?: Agent
  /** Limits of every `run_code` run. */
  readonly limits?: Partial<CodeRunLimits>
  /**
   * Tool discovery (see `PtcExecutorOptions.discovery`; default on, 8 000 characters): past the budget, `run_code`'s
   * description lists the upstreams' tools by namespace and clients get the `search_tools` tool.
   */
  readonly discovery?: DiscoveryOptions | false
  /**
   * One sandbox session per client connection (see `PtcExecutorOptions.sessions`): a client's programs
   * share their state, ended when it disconnects. Needs a runtime that keeps sessions (`endSession`).
   */
  readonly sandboxSessions?: boolean
  /**
   * Serve even when an upstream cannot be connected at start: it is retried in the background, its tools
   * appear when it connects, and `run_code`'s description says it is not connected meanwhile. Default
   * `false`: `createPtcMcpServer` rejects with `UpstreamUnavailableError` naming every such upstream.
   */
  readonly allowMissing?: boolean
  /** Timeout of each upstream request, and of one whole reading of a tool list (default: the MCP SDK's 60 s). */
  readonly requestTimeoutMs?: number
  /**
   * The most tools served from each upstream; the rest are left out with a warning. Default `MAX_UPSTREAM_TOOLS`
   * (1 000).
   */
  readonly maxUpstreamTools?: number
  /**
   * The longest message read from an upstream: a stdio line, an HTTP answer, one server-sent event. A longer answer
   * fails its call; past it on a stream no call owns, the connection is reset. Default `MAX_UPSTREAM_MESSAGE_BYTES`
   * (10 MiB, the MCP SDK's bound on a stdio line); at most 512 MiB.
   */
  readonly maxUpstreamMessageBytes?: number
  readonly reconnect?: ReconnectOptions
  /** Where warnings go (skipped tools, dropped schema keywords, reconnections). Default: stderr. */
  readonly onWarning?: (message: string) => void
  /**
   * Where spawned upstreams' stderr goes (at most `MAX_STDERR_BACKLOG` bytes waiting per upstream). Default: this
   * process's stderr.
   */
  readonly upstreamStderr?: NodeJS.WritableStream
}

/** How many of its latest warnings a server keeps in `warnings` (each is also given to `onWarning`, or stderr). */
const MAX_KEPT_WARNINGS = 1000

/** ptc's code mode as an MCP server: one instance, any number of client connections. */
export interface PtcMcpServer extends AsyncDisposable {
  readonly tools: ToolsService
  readonly agent: Agent
  readonly upstreams: readonly UpstreamConnection[]
  /** The warnings so far, in order: the last 1 000 (a long-lived server's reconnections add up). */
  readonly warnings: readonly string[]
  /** A new MCP protocol server bound to this instance (one per client connection). */
  createServer(): Server
  /** `createServer()` connected to `transport`. */
  connect(transport: Transport): Promise<Server>
  /** Close client connections and upstreams (the runtime stays the caller's). */
  close(): Promise<void>
}

/**
 * Connect to every upstream, register their tools, and serve `run_code` (plus, in `both` mode, the
 * upstream tools) to MCP clients. Every call goes through the registry's whole pipeline as `agent`.
 * An upstream that cannot be connected at start fails the start, unless `allowMissing` (then it is
 * retried in the background and its tools appear when it connects).
 * @throws UpstreamUnavailableError when an upstream cannot be connected and `allowMissing` is not set
 * @throws McpServeUsageError when two upstreams share a name, tool names collide, or `maxUpstreamTools` or
 *   `maxUpstreamMessageBytes` is not a positive integer (within its bound)
 */
export async function createPtcMcpServer(options: PtcMcpServerOptions): Promise<PtcMcpServer> {
  const approval = options.approval ?? createMcpApproval()
  const tools = options.tools ?? new ToolsService({ approval })
  const agent: Agent = options.agent ?? { id: 'ptc-serve' }
  const mode = options.mode ?? 'code'
  const warnings: string[] = []
  const warn = (message: string): void => {
    warnings.push(message)
    if (warnings.length > MAX_KEPT_WARNINGS) warnings.splice(0, warnings.length - MAX_KEPT_WARNINGS)
    if (options.onWarning !== undefined) options.onWarning(message)
    else process.stderr.write(`ptc serve: ${message}\n`)
  }
  checkBound('maxUpstreamTools', options.maxUpstreamTools)
  checkBound('maxUpstreamMessageBytes', options.maxUpstreamMessageBytes, MAX_MESSAGE_BYTES)
  const named = options.upstreams.flatMap((u) => (u.name === undefined ? [] : [u.name]))
  const twice = named.find((name, i) => named.indexOf(name) !== i)
  if (twice !== undefined)
    throw new McpServeUsageError(
      `two upstreams are named ${JSON.stringify(twice)}: their tools would share the names ${twice}.*; ` +
        'give each its own name',
    )
  const servers = new Set<Server>()
  const registry = new UpstreamRegistry(tools, warn, () => {
    for (const server of servers) server.sendToolListChanged().catch(() => undefined)
  })
  registry.reserve(named)
  // A connection's agent id (below) names its sandbox session.
  const sessions = options.sandboxSessions === true ? { key: (ctx: ToolRunContext) => ctx.agent?.id } : undefined
  const removeExecutor = tools.scoped(agent).setExecutor(
    createPtcExecutor({
      runtime: options.runtime,
      mode,
      ...(options.limits !== undefined && { limits: options.limits }),
      ...(sessions !== undefined && { sessions }),
      ...(options.discovery !== undefined && { discovery: options.discovery }),
    }),
  )
  const upstreams = options.upstreams.map(
    (spec) =>
      new UpstreamConnection(spec, {
        onTools: (connection, list) => registry.sync(connection, list),
        onWarning: warn,
        ...(options.reconnect !== undefined && { reconnect: options.reconnect }),
        ...(options.requestTimeoutMs !== undefined && { requestTimeoutMs: options.requestTimeoutMs }),
        ...(options.maxUpstreamTools !== undefined && { maxTools: options.maxUpstreamTools }),
        ...(options.maxUpstreamMessageBytes !== undefined && { maxMessageBytes: options.maxUpstreamMessageBytes }),
        ...(options.upstreamStderr !== undefined && { stderr: options.upstreamStderr }),
      }),
  )
  const failed: UpstreamConnection[] = []
  const reasons: string[] = []
  await Promise.all(
    upstreams.map((u) =>
      u.connect().catch((error: unknown) => {
        failed.push(u)
        reasons.push(messageOf(error))
      }),
    ),
  )
  /** A start that is refused leaves nothing behind: no upstream running, nothing registered, no executor. */
  const undoStart = async (): Promise<void> => {
    await Promise.all(upstreams.map((u) => u.close()))
    registry.clear()
    removeExecutor()
  }
  const collisions = registry.collisions ?? []
  registry.collisions = undefined
  if (collisions.length > 0) {
    await undoStart()
    throw new McpServeUsageError(`tool names collide: ${collisions.join('; ')}`)
  }
  if (failed.length > 0 && options.allowMissing !== true) {
    await undoStart()
    const which = failed.map((u) => u.label).join(', ')
    const one = failed.length === 1
    const fix =
      `start ${one ? 'it' : 'them'}, or serve without ${one ? 'it' : 'them'} until ` +
      `${one ? 'it connects' : 'they connect'} (allowMissing; ptc serve --allow-missing)`
    throw new UpstreamUnavailableError(which, `${reasons.join('; ')}; ${fix}`)
  }
  for (const reason of reasons) warn(`${reason} (retrying in the background; --allow-missing)`)

  let calls = 0
  let connections = 0
  const createServer = (): Server => {
    // One agent identity per client connection (MCP session), under the configured agent.
    const sessionAgent: Agent = {
      id: `${agent.id}:${++connections}`,
      parent: agent,
      ...(agent.session !== undefined && { session: agent.session }),
    }
    const server = new Server(
      { name: 'ptc-serve', version: '0.1.0' },
      { capabilities: { tools: { listChanged: true } } },
    )
    server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: listTools(tools, sessionAgent, upstreams) }))
    server.setRequestHandler(CallToolRequestSchema, async (request, extra): Promise<CallToolResult> => {
      const n = ++calls
      const callId = `mcp-${n}`
      // A client that asked for progress gets one notification as each sub-call of its program settles.
      const progressToken = request.params._meta?.progressToken
      let progress = 0
      const stopProgress =
        progressToken === undefined
          ? undefined
          : tools.on('tools/result', (exec, result) => {
              if (exec.rootCallId !== callId || exec.parent === undefined) return
              progress++
              const message = `${exec.name} ${result.isError ? 'failed' : 'done'} (${exec.callId})`
              extra
                .sendNotification({ method: 'notifications/progress', params: { progressToken, progress, message } })
                .catch(() => undefined)
            })
      let argumentsJson: string
      try {
        argumentsJson = JSON.stringify(request.params.arguments ?? {})
      } catch {
        // JSON.stringify recurses: arguments nested some thousands of levels deep overflow it (the pipeline
        // refuses past 1 024 anyway). The client gets what any refused arguments get, not a protocol error.
        stopProgress?.()
        return {
          content: [
            {
              type: 'text',
              text: argumentsTooDeep(request.params.name),
            },
          ],
          isError: true,
        }
      }
      let batch: ToolBatchResult
      approval.callers.set(callId, { server, requestId: extra.requestId })
      try {
        batch = await tools.execute({
          calls: [{ type: 'tool_call', id: callId, name: request.params.name, arguments: argumentsJson }],
          signal: extra.signal,
          agent: sessionAgent,
          log: { turn: n, step: 1 },
        })
      } catch (error) {
        // The call ran and only the session log failed (its events are missing from it): the client gets what the
        // call answered, and the operator the warning, rather than the client an error for work that was done.
        const answered =
          error instanceof ToolBatchExecutionError
            ? (error.results as readonly (ToolCallResult | undefined)[]).find((r) => r?.callId === callId)
            : undefined
        if (answered === undefined) throw error
        warn(
          `${(error as Error).message}: call ${callId} (${request.params.name}) was answered, and its events are ` +
            'missing from the session log',
        )
        batch = {
          results: [answered],
          additionalContexts: [...(answered.result.additionalContexts ?? [])],
          concluded: false,
        }
      } finally {
        approval.callers.delete(callId)
        stopProgress?.()
      }
      const result = batch.results[0]?.result
      if (result === undefined) return { content: [{ type: 'text', text: noResult() }], isError: true }
      const content = toMcpContent([...result.content, ...batch.additionalContexts.flatMap((m) => m.content)])
      if (result.isError) return { content, isError: true }
      // The value the pipeline validated against the tool's output schema: an object exactly when that schema
      // declares one.
      return structuredOutput(tools, sessionAgent, request.params.name) !== undefined && isJsonObject(result.value)
        ? { content, structuredContent: result.value }
        : { content }
    })
    servers.add(server)
    server.onclose = () => {
      servers.delete(server)
      // The connection's sandbox session goes with it.
      if (sessions !== undefined) void options.runtime.endSession?.(sessionAgent.id).catch(() => undefined)
    }
    return server
  }
  let closing: Promise<void> | undefined
  const close = (): Promise<void> =>
    (closing ??= (async () => {
      await Promise.all([...servers].map((s) => s.close().catch(() => undefined)))
      await Promise.all(upstreams.map((u) => u.close()))
      registry.clear()
      removeExecutor()
    })())
  return {
    tools,
    agent,
    upstreams,
    warnings,
    createServer,
    async connect(transport) {
      const server = createServer()
      await server.connect(transport)
      return server
    },
    close,
    [Symbol.asyncDispose]: close,
  }
}

/**
 * The MCP tool list: the step's model input, with the SDK text in `run_code`'s description, and the
 * output schema of every tool whose output is an object (MCP's `outputSchema` must describe one).
 */
function listTools(tools: ToolsService, agent: Agent, upstreams: readonly UpstreamConnection[]): Tool[] {
  const input = tools.modelInput(agent)
  const down = upstreams.filter((u) => !u.connected).map((u) => u.label)
  // An upstream never connected has no tools listed yet; one that dropped keeps its last list, whose calls fail
  // meanwhile.
  const note = down.length === 0 ? [] : [upstreamsDown(down)]
  const sdk = [...input.sections.map((s) => s.text), ...note].join('\n\n')
  return input.schemas.map((schema) => {
    const outputSchema = structuredOutput(tools, agent, schema.name)
    return {
      name: schema.name,
      description: schema.name === RUN_CODE && sdk !== '' ? `${schema.description}\n\n${sdk}` : schema.description,
      inputSchema: schema.parameters as Tool['inputSchema'],
      ...(outputSchema !== undefined && { outputSchema }),
    }
  })
}

/** The tool's output schema as MCP's `outputSchema` (a JSON Schema of `type: 'object'`), or undefined. */
function structuredOutput(tools: ToolsService, agent: Agent, name: string): Tool['outputSchema'] {
  const schema = tools.get(name, agent)?.output.schema
  if (schema === undefined || typeof schema !== 'object' || schema === null || Array.isArray(schema)) return undefined
  return (schema as { type?: unknown }).type === 'object' ? (schema as Tool['outputSchema']) : undefined
}

function isJsonObject(value: JsonValue): value is { [key: string]: JsonValue } {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}
