import type { CodeRunLimits } from '@ptc/sandbox'
import { CliError, firstLine } from '../errors.js'
import { escapingStream, type CliIo } from '../io.js'
import { mergeLimits } from '../runtime.js'

type ServeIo = { stdin: NodeJS.ReadableStream; stdout: NodeJS.WritableStream; stderr: NodeJS.WritableStream }
type ServeCommand = (argv: string[], io: ServeIo, options: { limits: Partial<CodeRunLimits> }) => Promise<number>

/** Kept in a variable so neither the type checker nor the bundler needs @ptc/mcp to exist. */
const MCP_PACKAGE = '@ptc/mcp'

/** `ptc serve …`: handed to `@ptc/mcp`'s `serveCommand`; a clear usage error when it is not installed. */
export async function serveCommand(args: readonly string[], io: CliIo): Promise<number> {
  let serve: unknown
  try {
    const mod = (await import(MCP_PACKAGE)) as Record<string, unknown>
    serve = mod.serveCommand
  } catch (error) {
    throw new CliError('UNAVAILABLE', `the serve command is not available: ${MCP_PACKAGE} could not be loaded (${firstLine(error)})`, { cause: error })
  }
  if (typeof serve !== 'function') throw new CliError('UNAVAILABLE', `the serve command is not available: ${MCP_PACKAGE} does not export serveCommand`)
  // stdout may be the MCP channel (byte-exact); stderr is for people: upstream text reaches it escaped.
  // The CLI's limits, sized for a model's context (its flags win over them there).
  return (serve as ServeCommand)([...args], { stdin: io.stdin, stdout: io.stdout, stderr: escapingStream(io.stderr) }, { limits: mergeLimits() })
}
