import { Server } from '@modelcontextprotocol/sdk/server/index.js'
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js'
import { CallToolRequestSchema, ListToolsRequestSchema, type CallToolResult, type Tool } from '@modelcontextprotocol/sdk/types.js'
import { createPtcExecutor } from '@ptc/ptc'
import type { CodeRunLimits, CodeRuntime } from '@ptc/sandbox'
import { RUN_CODE, ToolsService, type Agent } from '@ptc/tools'
import { toMcpContent } from '../upstream/content.js'
import { messageOf, UpstreamConnection, type ReconnectOptions, type UpstreamSpec } from '../upstream/connection.js'
import { UpstreamRegistry } from './upstream-registry.js'

export interface PtcMcpServerOptions {
  /** Upstream MCP servers whose tools become `<namespace>.<tool>`. */
  readonly upstreams: readonly UpstreamSpec[]
  /** The sandbox programs run in (the caller owns and disposes it). */
  readonly runtime: CodeRuntime
  /** `code` (default): clients see only `run_code`; `both`: the upstream tools too. */
  readonly mode?: 'code' | 'both'
  /** A host's registry (with its policy, guards, approval); default: a new `ToolsService`. */
  readonly tools?: ToolsService
  /** The agent every call runs as; give it a session to log calls and sub-calls. Default `{ id: 'ptc-serve' }`. */
  readonly agent?: Agent
  /** Limits of every `run_code` run. */
  readonly limits?: Partial<CodeRunLimits>
  /** Timeout of each upstream request (default: the MCP SDK's 60 s). */
  readonly requestTimeoutMs?: number
  readonly reconnect?: ReconnectOptions
  /** Where warnings go (skipped tools, dropped schema keywords, reconnections). Default: stderr. */
  readonly onWarning?: (message: string) => void
  /** Where spawned upstreams' stderr goes. Default: this process's stderr. */
  readonly upstreamStderr?: NodeJS.WritableStream
}

/** ptc's code mode as an MCP server: one instance, any number of client connections. */
export interface PtcMcpServer extends AsyncDisposable {
  readonly tools: ToolsService
  readonly agent: Agent
  readonly upstreams: readonly UpstreamConnection[]
  /** Every warning so far, in order. */
  readonly warnings: readonly string[]
  /** A new MCP protocol server bound to this instance (one per client connection). */
  createServer(): Server
  /** `createServer()` connected to `transport`. */
  connect(transport: Transport): Promise<Server>
  /** Close client connections and upstreams (the runtime stays the caller's). */
  close(): Promise<void>
}

/**
 * Connect to every upstream (one that fails is retried in the background and
 * its tools appear when it connects), register their tools, and serve
 * `run_code` (plus, in `both` mode, the upstream tools) to MCP clients. Every
 * call goes through the registry's whole pipeline as `agent`.
 */
export async function createPtcMcpServer(options: PtcMcpServerOptions): Promise<PtcMcpServer> {
  const tools = options.tools ?? new ToolsService()
  const agent: Agent = options.agent ?? { id: 'ptc-serve' }
  const mode = options.mode ?? 'code'
  const warnings: string[] = []
  const warn = (message: string): void => {
    warnings.push(message)
    if (options.onWarning !== undefined) options.onWarning(message)
    else process.stderr.write(`ptc serve: ${message}\n`)
  }
  const servers = new Set<Server>()
  const registry = new UpstreamRegistry(tools, warn, () => {
    for (const server of servers) server.sendToolListChanged().catch(() => undefined)
  })
  registry.reserve(options.upstreams.flatMap((u) => (u.name === undefined ? [] : [u.name])))
  const removeExecutor = tools.scoped(agent).setExecutor(createPtcExecutor({ runtime: options.runtime, mode, ...(options.limits !== undefined && { limits: options.limits }) }))
  const upstreams = options.upstreams.map(
    (spec) =>
      new UpstreamConnection(spec, {
        onTools: (connection, list) => registry.sync(connection, list),
        onWarning: warn,
        ...(options.reconnect !== undefined && { reconnect: options.reconnect }),
        ...(options.requestTimeoutMs !== undefined && { requestTimeoutMs: options.requestTimeoutMs }),
        ...(options.upstreamStderr !== undefined && { stderr: options.upstreamStderr }),
      }),
  )
  await Promise.all(upstreams.map((u) => u.connect().catch((error: unknown) => warn(`${messageOf(error)} (retrying in the background)`))))

  let calls = 0
  const createServer = (): Server => {
    const server = new Server({ name: 'ptc-serve', version: '0.1.0' }, { capabilities: { tools: { listChanged: true } } })
    server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: listTools(tools, agent) }))
    server.setRequestHandler(CallToolRequestSchema, async (request, extra): Promise<CallToolResult> => {
      const n = ++calls
      const batch = await tools.execute({
        calls: [{ type: 'tool_call', id: `mcp-${n}`, name: request.params.name, arguments: JSON.stringify(request.params.arguments ?? {}) }],
        signal: extra.signal,
        agent,
        log: { turn: n, step: 1 },
      })
      const result = batch.results[0]?.result
      if (result === undefined) return { content: [{ type: 'text', text: 'Error: no result' }], isError: true }
      const content = toMcpContent([...result.content, ...batch.additionalContexts.flatMap((m) => m.content)])
      return result.isError ? { content, isError: true } : { content }
    })
    servers.add(server)
    server.onclose = () => servers.delete(server)
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

/** The MCP tool list: the step's model input, with the SDK text in `run_code`'s description. */
function listTools(tools: ToolsService, agent: Agent): Tool[] {
  const input = tools.modelInput(agent)
  const sdk = input.sections.map((s) => s.text).join('\n\n')
  return input.schemas.map((schema) => ({
    name: schema.name,
    description: schema.name === RUN_CODE && sdk !== '' ? `${schema.description}\n\n${sdk}` : schema.description,
    inputSchema: schema.parameters as Tool['inputSchema'],
  }))
}
