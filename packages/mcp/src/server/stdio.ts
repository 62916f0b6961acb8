import type { Readable, Writable } from 'node:stream'
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js'
import type { PtcMcpServer } from './ptc-mcp-server.js'

/**
 * Serve one MCP client on stdin/stdout; resolves when stdin ends, the connection closes, or `stop` resolves.
 * `onReady` runs once the transport is connected and reading.
 */
export async function startStdio(
  ptc: PtcMcpServer,
  io: { stdin: NodeJS.ReadableStream; stdout: NodeJS.WritableStream },
  onReady?: () => void,
  stop?: Promise<void>,
): Promise<void> {
  const stdin = io.stdin as Readable
  const transport = new StdioServerTransport(stdin, io.stdout as Writable)
  const server = await ptc.connect(transport)
  onReady?.()
  await new Promise<void>((resolve) => {
    const done = (): void => resolve()
    const previous = server.onclose
    server.onclose = () => {
      previous?.()
      done()
    }
    stdin.once('end', done)
    stdin.once('close', done)
    void stop?.then(done)
  })
  await server.close().catch(() => undefined)
}
