import type { Readable, Writable } from 'node:stream'
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js'
import { STDIO_DEFAULT_MAX_BUFFER_SIZE } from '@modelcontextprotocol/sdk/shared/stdio.js'
import { useLineBuffer } from '../upstream/line-buffer.js'
import type { PtcMcpServer } from './ptc-mcp-server.js'
import { stdioFlowControl } from './stdio-flow.js'

/**
 * Serve one MCP client on stdin/stdout; resolves when stdin ends, the connection closes, `stop` resolves, or
 * stdout fails (the client closed it: nothing it asks can be answered), with that failure's message; or
 * `inputFailed` when the connection closed over what the client sent (a message past the 10 MiB bound).
 * `onReady` runs once the transport is connected and reading.
 */
export async function startStdio(
  ptc: PtcMcpServer,
  io: { stdin: NodeJS.ReadableStream; stdout: NodeJS.WritableStream },
  onReady?: () => void,
  stop?: Promise<void>,
): Promise<{ stdoutFailed?: string; inputFailed?: string }> {
  const stdin = io.stdin as Readable
  const stdout = io.stdout as Writable
  let stdoutFailed: string | undefined
  let failed: (() => void) | undefined
  // Stays for the writes still to come: a write to a closed pipe fails with EPIPE, and an error nobody listens
  // to would end the process (its upstreams left running, its log cut).
  stdout.on('error', (error) => {
    stdoutFailed ??= error.message
    failed?.()
  })
  // The client's messages are framed in linear time, with the SDK's bound (10 MiB).
  const transport = useLineBuffer(new StdioServerTransport(stdin, stdout), STDIO_DEFAULT_MAX_BUFFER_SIZE)
  const flow = stdioFlowControl(transport, stdin, stdout)
  const server = await ptc.connect(transport)
  // The SDK closes the transport when a message outgrows the bound, saying why only to `onerror`.
  let inputFailed: string | undefined
  const protocolOnError = transport.onerror
  transport.onerror = (error: Error) => {
    if (/exceeded maximum size/.test(error.message)) inputFailed ??= error.message
    protocolOnError?.(error)
  }
  onReady?.()
  await new Promise<void>((resolve) => {
    const done = (): void => resolve()
    failed = done
    if (stdoutFailed !== undefined) done()
    const previous = server.onclose
    server.onclose = () => {
      previous?.()
      done()
    }
    stdin.once('end', done)
    stdin.once('close', done)
    void stop?.then(done)
  })
  flow.stop()
  await server.close().catch(() => undefined)
  return { ...(stdoutFailed !== undefined && { stdoutFailed }), ...(inputFailed !== undefined && { inputFailed }) }
}
