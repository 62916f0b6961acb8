import { DEFAULT_LIMITS, type CodeRunLimits, type CodeRuntime } from '@ptc/sandbox'
import { createQuickJSRuntime } from '@ptc/sandbox-quickjs'
import type { DiscoveryOptions } from '@ptc/ptc'
import type { Agent, ToolsService } from '@ptc/tools'
import { JsonlSession } from '@ptc/tools/session'
import { McpServeUsageError } from './errors.js'
import { discoveryOption, httpOptions, parseServeArgs, serveUsage, TOKEN_ENV, type ServeArgs } from './serve-args.js'
import { listenHttp } from './server/http/endpoint.js'
import type { McpApproval } from './server/approval.js'
import { createPtcMcpServer, type PtcMcpServer } from './server/ptc-mcp-server.js'
import { startStdio } from './server/stdio.js'

/** The streams `ptc serve` talks on (stdio mode: the MCP channel is stdin/stdout; messages go to stderr). */
export interface ServeIo {
  stdin: NodeJS.ReadableStream
  stdout: NodeJS.WritableStream
  stderr: NodeJS.WritableStream
}

export interface ServeCommandOptions {
  /** Stops the server (as SIGINT and SIGTERM do). */
  readonly signal?: AbortSignal
  /** Read for `$PTC_SERVE_TOKEN` (default `process.env`). */
  readonly env?: Readonly<Record<string, string | undefined>>
  /**
   * The host's registry: its tools are served next to the upstreams' (then
   * `--upstream` is optional), its policies, guards and approval apply to
   * every call. Default: a new `ToolsService`.
   */
  readonly tools?: ToolsService
  /**
   * The limits of every run unless a flag says otherwise (the `ptc` CLI passes its own and the config's; default: the
   * sandbox's).
   */
  readonly limits?: Partial<CodeRunLimits>
  /** The sandbox when `--sandbox` is not given (default `quickjs`). */
  readonly sandbox?: 'quickjs' | 'isolated-vm'
  /** The `McpApproval` that `tools` was given, if any (so an `ask` reaches the calling client). */
  readonly approval?: McpApproval
  /** Tool discovery unless a flag says otherwise (the `ptc` CLI passes a config's; default: on, 8 000 characters). */
  readonly discovery?: DiscoveryOptions | false
}

/**
 * `ptc serve …`: resolves with the exit status when the server stops (`signal`,
 * SIGINT or SIGTERM; stdio also: the client closed stdin), having closed its
 * upstreams, runtime and session log. 0 after `--help`, 2 on bad usage.
 */
export async function serveCommand(argv: string[], io: ServeIo, options: ServeCommandOptions = {}): Promise<number> {
  const defaults: CodeRunLimits = { ...DEFAULT_LIMITS, ...options.limits }
  let args: ServeArgs
  try {
    const localTools = options.tools !== undefined && options.tools.definitions().length > 0
    args = parseServeArgs(argv, options.env ?? process.env, {
      localTools,
      ...(options.sandbox !== undefined && { sandbox: options.sandbox }),
    })
  } catch (error) {
    // One line: the whole usage after it hid the message; --help prints it.
    io.stderr.write(`ptc serve: ${error instanceof Error ? error.message : String(error)}; see \`ptc serve --help\`\n`)
    return 2
  }
  if (args.help) {
    io.stdout.write(`${serveUsage(defaults)}\n`)
    return 0
  }
  // stderr only carries messages: a client that closed it (a write then fails with EPIPE) does not stop the
  // server, which would otherwise end on that error with its upstreams left running.
  io.stderr.on('error', () => undefined)
  const warn = (message: string): void => {
    if ((io.stderr as { destroyed?: boolean }).destroyed !== true) io.stderr.write(`ptc serve: ${message}\n`)
  }
  let runtime: CodeRuntime
  try {
    runtime = await createRuntime(args.sandbox)
  } catch (error) {
    warn(error instanceof Error ? error.message : String(error))
    return args.sandbox === 'isolated-vm' ? 2 : 1
  }
  const discovery = discoveryOption(options.discovery, args.discovery)
  const session = args.session === undefined ? undefined : await JsonlSession.open(args.session)
  const agent: Agent = session === undefined ? { id: 'ptc-serve' } : { id: 'ptc-serve', session }
  try {
    const ptc = await createPtcMcpServer({
      upstreams: args.upstreams,
      ...(options.tools !== undefined && { tools: options.tools }),
      ...(options.approval !== undefined && { approval: options.approval }),
      runtime,
      mode: args.mode,
      agent,
      onWarning: warn,
      upstreamStderr: io.stderr,
      limits: { ...defaults, ...args.limits },
      ...(discovery !== undefined && { discovery }),
      sandboxSessions: args.sandboxSessions,
      allowMissing: args.allowMissing,
      ...(args.timeoutMs !== undefined && { requestTimeoutMs: args.timeoutMs }),
      ...(args.maxUpstreamTools !== undefined && { maxUpstreamTools: args.maxUpstreamTools }),
      ...(args.maxUpstreamMessageBytes !== undefined && { maxUpstreamMessageBytes: args.maxUpstreamMessageBytes }),
    })
    const ready = (where: string): void => warn(`ready (${where}, ${args.mode} mode): ${readiness(ptc)}`)
    try {
      if (args.http === undefined) {
        // A signal stops it as the client's leaving does: the upstreams it spawned are stopped with it, and the
        // session log is closed, instead of the process dying with them left behind.
        const stop = stopped(options.signal)
        try {
          const ended = await startStdio(ptc, io, () => ready('stdio'), stop.promise)
          if (ended.stdoutFailed !== undefined)
            warn(`stopping: stdout failed (${ended.stdoutFailed}), so no answer can reach the client`)
          if (ended.inputFailed !== undefined) {
            warn(
              `stopping: the client sent a message longer than a message may be (${ended.inputFailed}); the ` +
                `connection cannot go on after it`,
            )
            return 1
          }
        } finally {
          stop.dispose()
        }
      } else {
        const endpoint = await listenHttp(ptc, { ...httpOptions(args, args.http), onError: warn })
        warn(`listening on ${endpoint.url}`)
        if (endpoint.token === undefined) warn('authentication is off (--no-auth): any local process can call run_code')
        else if (args.token === undefined)
          warn(
            `bearer token (generated; set $${TOKEN_ENV} to choose one): ${endpoint.token}\n  clients send ` +
              `"Authorization: Bearer ${endpoint.token}"`,
          )
        else warn(`clients send "Authorization: Bearer <the token from ${args.tokenSource ?? '--token'}>"`)
        ready(endpoint.url)
        const stop = stopped(options.signal)
        await stop.promise
        await endpoint.close()
      }
    } finally {
      await ptc.close()
    }
    return 0
  } catch (error) {
    warn(error instanceof Error ? error.message : String(error))
    return 1
  } finally {
    await runtime.dispose()
    await session?.close()
  }
}

/** What the readiness line says: the tools served, and each upstream's state. */
function readiness(ptc: PtcMcpServer): string {
  const count = ptc.tools.definitions(ptc.agent).length
  const upstreams = ptc.upstreams.map(
    (u) => `upstream ${u.label} ${u.connected ? 'connected' : 'not connected (retrying)'}`,
  )
  return [`${count} tool${count === 1 ? '' : 's'}`, ...upstreams].join('; ')
}

async function createRuntime(sandbox: ServeArgs['sandbox']): Promise<CodeRuntime> {
  if (sandbox === 'quickjs') return createQuickJSRuntime()
  // Optional backend: loaded only when asked for, and only if installed.
  const specifier = '@ptc/sandbox-isolated-vm'
  let backend: {
    isolatedVmAvailability(): { available: boolean; reason?: string }
    createIsolatedVmRuntime(): CodeRuntime
  }
  try {
    backend = (await import(specifier)) as typeof backend
  } catch {
    throw new McpServeUsageError('--sandbox isolated-vm: @ptc/sandbox-isolated-vm is not installed')
  }
  const availability = backend.isolatedVmAvailability()
  if (!availability.available)
    throw new McpServeUsageError(`--sandbox isolated-vm is not available: ${availability.reason ?? 'unknown reason'}`)
  return backend.createIsolatedVmRuntime()
}

/** Resolves on `signal`, SIGINT or SIGTERM (whichever comes first); `dispose` stops listening for them. */
function stopped(signal: AbortSignal | undefined): { promise: Promise<void>; dispose: () => void } {
  let done = (): void => undefined
  const promise = new Promise<void>((resolve) => {
    done = (): void => {
      dispose()
      resolve()
    }
  })
  const dispose = (): void => {
    process.off('SIGINT', done)
    process.off('SIGTERM', done)
    signal?.removeEventListener('abort', done)
  }
  if (signal?.aborted === true) done()
  else {
    signal?.addEventListener('abort', done, { once: true })
    process.once('SIGINT', done)
    process.once('SIGTERM', done)
  }
  return { promise, dispose }
}
