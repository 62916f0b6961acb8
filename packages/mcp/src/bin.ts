/**
 * `ptc serve` as a standalone entry (until the `ptc` CLI wires it):
 *   node --conditions=@ptc/source --import tsx packages/mcp/src/bin.ts --upstream "fs=npx -y @modelcontextprotocol/server-filesystem /tmp"
 */
import { serveCommand } from './serve-command.js'

const code = await serveCommand(process.argv.slice(2), process)
process.exit(code)
