/** Test support: an upstream fixture server and MCP client helpers (the SDK's real client). */
import { Readable } from 'node:stream'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js'
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js'
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js'
import type { PtcMcpServer } from '../server/ptc-mcp-server.js'
import type { Server } from '@modelcontextprotocol/sdk/server/index.js'
import { createFixtureServer, type FixtureServerOptions } from './fixture-server.js'

export { createFixtureServer, FIXTURE_TOOLS, UNUSABLE_TOOL, type FixtureServerOptions } from './fixture-server.js'
export { serveFixtureOverHttp, type HttpFixture } from './http-fixture.js'
export { Client }
export type { CallToolResult, Tool } from '@modelcontextprotocol/sdk/types.js'

/**
 * Spawn `command args…` (an MCP server over stdio) and connect the SDK client to it. With `elicit`, the client
 * declares the elicitation capability and answers each elicitation request (its message is passed) with it.
 */
export async function connectStdioClient(
  command: string,
  args: string[],
  options: { cwd?: string; env?: Record<string, string>; elicit?: Elicit } = {},
): Promise<{ client: Client; transport: StdioClientTransport }> {
  const { elicit, ...spawn } = options
  const transport = new StdioClientTransport({ command, args, stderr: 'pipe', ...spawn })
  const client = elicitingClient(elicit)
  reportEarlyClose(client, transport, `${command} ${args.join(' ')}`)
  await client.connect(transport)
  return { client, transport }
}

/** The most of a server's stderr shown when it closes early. */
const STDERR_SHOWN_CHARS = 64 * 1024

/**
 * A server that closes the connection before the client asked (it exited) is reported on the test's stderr
 * with what it wrote to its own, which nothing else may read: a test then fails with "Connection closed" and
 * this says why. Its stderr is read only then, from what the pipe holds: a test that reads it itself
 * (attaching a listener after connecting) must still get all of it.
 */
function reportEarlyClose(client: Client, transport: StdioClientTransport, what: string): void {
  let closing = false
  const close = client.close.bind(client)
  client.close = async () => {
    closing = true
    await close()
  }
  client.onclose = () => {
    if (closing) return
    const stream = transport.stderr
    let text = '(read by the test)'
    if (stream instanceof Readable && stream.readableFlowing !== true) {
      const held: unknown = stream.read()
      text = held === null ? '(nothing)' : String(held).slice(0, STDERR_SHOWN_CHARS)
    }
    process.stderr.write(`connectStdioClient: ${what} closed the connection on its own; its stderr:\n${text}\n`)
  }
}

/** The SDK client connected to an HTTP endpoint, sending `Authorization: Bearer <token>` when a token is given. */
export async function connectHttpClient(url: string, options: { token?: string | undefined } = {}): Promise<Client> {
  const client = new Client({ name: 'ptc-test-client', version: '1.0.0' })
  await client.connect(httpClientTransport(url, options))
  return client
}

/** The SDK's Streamable HTTP client transport with the bearer header (its `sessionId` is readable after connecting). */
export function httpClientTransport(
  url: string,
  options: { token?: string | undefined } = {},
): StreamableHTTPClientTransport {
  const headers: Record<string, string> =
    options.token === undefined ? {} : { authorization: `Bearer ${options.token}` }
  return new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } })
}

/** A client's answer to an elicitation (`accept` with the form's content, `decline` or `cancel`). */
export type ElicitAnswer =
  | { action: 'accept'; content: Record<string, string | number | boolean> }
  | { action: 'decline' | 'cancel' }

/** How a test client answers an elicitation request, given its message. */
export type Elicit = (message: string) => ElicitAnswer | Promise<ElicitAnswer>

/**
 * The SDK client connected in-process to a ptc MCP server. With `elicit`, the client declares the
 * elicitation capability and answers each elicitation request (its message is passed) with it.
 */
export async function connectInMemory(ptc: PtcMcpServer, options: { elicit?: Elicit } = {}): Promise<Client> {
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair()
  await ptc.connect(serverSide)
  const client = elicitingClient(options.elicit)
  await client.connect(clientSide)
  return client
}

/** The test client, declaring elicitation and answering it with `elicit` when given. */
function elicitingClient(elicit: Elicit | undefined): Client {
  const client = new Client(
    { name: 'ptc-test-client', version: '1.0.0' },
    elicit === undefined ? {} : { capabilities: { elicitation: {} } },
  )
  if (elicit !== undefined)
    client.setRequestHandler(ElicitRequestSchema, async (request) => elicit(request.params.message))
  return client
}

/**
 * An in-process fixture upstream: a transport factory for `UpstreamSpec.transport` (a fresh server each
 * connection, handed to `onServer`, e.g. to send notifications from it).
 */
export function inMemoryFixture(
  options: FixtureServerOptions & { onServer?: (server: Server) => void } = {},
): () => Transport {
  return () => {
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair()
    const server = createFixtureServer(options)
    options.onServer?.(server)
    void server.connect(serverSide)
    return clientSide
  }
}
