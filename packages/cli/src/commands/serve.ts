import type { CodeRunLimits } from '@ptc/sandbox'
import type { ApprovalService, ToolsService } from '@ptc/tools'
import { configuredService, commandConfig } from '../config/service.js'
import type { PtcDiscoveryConfig, PtcSandboxName } from '../config/define.js'
import { splitConfigOption } from '../config/load.js'
import { CliError, firstLine } from '../errors.js'
import { escapingStream, writeMessage, type CliIo } from '../io.js'
import { configApproval } from '../run/approval.js'
import { mergeLimits } from '../runtime.js'

type ServeIo = { stdin: NodeJS.ReadableStream; stdout: NodeJS.WritableStream; stderr: NodeJS.WritableStream }
type ServeOptions = {
  tools?: ToolsService
  limits: Partial<CodeRunLimits>
  sandbox?: PtcSandboxName
  approval?: ApprovalService
  discovery?: PtcDiscoveryConfig
}
type ServeCommand = (argv: string[], io: ServeIo, options: ServeOptions) => Promise<number>

/** Kept in a variable so neither the type checker nor the bundler needs @ptc/mcp to exist. */
const MCP_PACKAGE = '@ptc/mcp'

/**
 * `ptc serve …`: handed to `@ptc/mcp`'s `serveCommand` (a clear usage error
 * when it is not installed), with the config's registry (`--config FILE`, else
 * the working directory's `ptc.config.*`): its tools next to the upstreams',
 * its setup and approval on every call, its limits, sandbox and discovery under the flags.
 */
export async function serveCommand(args: readonly string[], io: CliIo): Promise<number> {
  let serve: unknown
  let mcpApproval: unknown
  try {
    const mod = (await import(MCP_PACKAGE)) as Record<string, unknown>
    serve = mod.serveCommand
    mcpApproval = mod.createMcpApproval
  } catch (error) {
    throw new CliError(
      'UNAVAILABLE',
      `the serve command is not available: ${MCP_PACKAGE} could not be loaded (${firstLine(error)})`,
      { cause: error },
    )
  }
  if (typeof serve !== 'function')
    throw new CliError('UNAVAILABLE', `the serve command is not available: ${MCP_PACKAGE} does not export serveCommand`)
  const { config: explicit, rest } = splitConfigOption(args)
  const help = rest.includes('--help') || rest.includes('-h')
  const config = help ? undefined : await commandConfig(explicit, io.cwd)
  // The CLI's limits, sized for a model's context; the config's win over them, serve's flags over both.
  const options: ServeOptions = { limits: mergeLimits(config?.config.limits) }
  if (config !== undefined) {
    const { approval, sandbox, discovery } = config.config
    // Without an approval in the config, an `ask` goes to the calling MCP client (elicitation).
    const fromClient =
      approval === undefined && typeof mcpApproval === 'function' ? (mcpApproval as () => ApprovalService)() : undefined
    const { service, label } = await configuredService({
      config,
      toolsModule: undefined,
      cwd: io.cwd,
      approval: approval === undefined ? fromClient : configApproval(approval, config.shown, io),
      fallback: 'none',
    })
    options.tools = service
    if (fromClient !== undefined) options.approval = fromClient
    if (sandbox !== undefined) options.sandbox = sandbox
    // serve's flags win over it (`--no-discovery`, `--discovery-budget`, `--always-load`).
    if (discovery !== undefined) options.discovery = discovery
    const names = service.definitions().map((t) => t.name)
    writeMessage(
      io.stderr,
      `config ${config.shown}: ` +
        `${label === undefined || names.length === 0 ? 'no local tools' : `serving local tools ${names.join(', ')}`}`,
    )
  }
  // stdout may be the MCP channel (byte-exact); stderr is for people: upstream text reaches it escaped.
  return (serve as ServeCommand)(
    rest,
    { stdin: io.stdin, stdout: io.stdout, stderr: escapingStream(io.stderr) },
    options,
  )
}
