import { CliError, firstLine } from '../errors.js'
import { escapingStream, type CliIo } from '../io.js'

type ServeCommand = (argv: string[], io: { stdin: NodeJS.ReadableStream; stdout: NodeJS.WritableStream; stderr: NodeJS.WritableStream }) => Promise<number>

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
  return (serve as ServeCommand)([...args], { stdin: io.stdin, stdout: io.stdout, stderr: escapingStream(io.stderr) })
}
