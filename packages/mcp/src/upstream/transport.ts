import type { Readable } from 'node:stream'
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js'
import { StdioClientTransport, type StdioServerParameters } from '@modelcontextprotocol/sdk/client/stdio.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js'
import { ErrorCode } from '@modelcontextprotocol/sdk/types.js'
import { lineTooLong } from '../messages.js'
import { UpstreamFetch, type OversizedAnswer } from './bounded-fetch.js'
import { useLineBuffer } from './line-buffer.js'
import { sendInTurn } from './send-in-turn.js'
import { forwardStderr } from './stderr.js'

/** This side resets the connection, for `why` (what its failed calls and its disconnection then say). */
type Reset = (why: string) => void

/**
 * The transport to an upstream at `url`: Streamable HTTP, or the legacy HTTP+SSE transport (`sse`). Each message
 * read is bounded by `maxBytes`; an answer past it fails its call, and an event stream past it resets the
 * connection.
 */
export function httpTransport(
  url: string,
  headers: Readonly<Record<string, string>> | undefined,
  sse: boolean,
  maxBytes: number,
  reset: Reset,
): Transport {
  const target = new URL(url)
  const requestInit = { headers: { ...headers } }
  const http = new UpstreamFetch(maxBytes, (answer) => oversized(transport, answer, reset))
  const { fetch } = http
  const transport = sse
    ? new SSEClientTransport(target, { requestInit, fetch })
    : new StreamableHTTPClientTransport(target, { requestInit, fetch })
  // Set before the client connects, which calls it before its own handler.
  transport.onmessage = (message) => {
    if ('id' in message && message.id !== undefined && ('result' in message || 'error' in message))
      http.answered(message.id)
  }
  return transport
}

/**
 * An HTTP answer went past `maxMessageBytes`: the call it answered fails with that reason (delivered as the
 * upstream's error answer, before the transport sees its body fail); an event stream no call owns cannot be
 * read on, and the connection is reset (its calls fail, it reconnects).
 */
function oversized(transport: Transport, answer: OversizedAnswer, reset: Reset): void {
  if (answer.requestId !== undefined) {
    transport.onmessage?.({
      jsonrpc: '2.0',
      id: answer.requestId,
      error: { code: ErrorCode.InternalError, message: answer.message },
    })
    return
  }
  reset(answer.message)
  transport.close().catch(() => undefined)
}

/**
 * The stdio transport to a spawned upstream: its messages sent one after another (`sendInTurn`), each line it
 * writes bounded by `maxBytes` (past it the connection is reset), its stderr forwarded to `stderr` (default: this
 * process's; what it does not take in time is dropped and counted to `onDropped`).
 */
export function stdioTransport(
  server: Pick<StdioServerParameters, 'command' | 'args' | 'env' | 'cwd'>,
  maxBytes: number,
  reset: Reset,
  stderr: NodeJS.WritableStream | undefined,
  onDropped: (bytes: number) => void,
): Transport {
  const transport = useLineBuffer(
    sendInTurn(new StdioClientTransport({ ...server, stderr: 'pipe', maxBufferSize: maxBytes })),
    maxBytes,
  )
  // The SDK closes the connection on a line past its bound, and names the bound only to this handler (the
  // client chains its own after it).
  transport.onerror = (error) => {
    if (error.message.startsWith('ReadBuffer exceeded')) reset(lineTooLong(maxBytes))
  }
  const from = transport.stderr
  if (from !== null) forwardStderr(from as Readable, stderr ?? process.stderr, onDropped)
  return transport
}
