import type { Readable } from 'node:stream'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { DEFAULT_REQUEST_TIMEOUT_MSEC } from '@modelcontextprotocol/sdk/shared/protocol.js'
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js'
import {
  ErrorCode,
  ResultSchema,
  McpError as SdkMcpError,
  ToolListChangedNotificationSchema,
  ToolSchema,
  type CallToolResult,
  type Tool,
} from '@modelcontextprotocol/sdk/types.js'
import { textHead } from '@ptc/tools'
import { batchSignal } from '@ptc/tools/executor'
import type { JsonSchemaValidator, jsonSchemaValidator } from '@modelcontextprotocol/sdk/validation'
import { checkBound, UpstreamUnavailableError } from '../errors.js'
import { MAX_MESSAGE_BYTES, MAX_UPSTREAM_MESSAGE_BYTES, UpstreamFetch, type OversizedAnswer } from './bounded-fetch.js'
import { useLineBuffer } from './line-buffer.js'
import { cancelledRequest, sendInTurn } from './send-in-turn.js'
import { forwardStderr } from './stderr.js'

/**
 * The client's validators of tool results: none. The SDK's client compiles, with Ajv, the output schema of every
 * tool an upstream lists, and checks each result against it on the host thread: a hostile upstream's 4.7 MB schema
 * blocked the host for 25 s while it was compiled (before ptc's own bounds, `MAX_UPSTREAM_SCHEMA_CHARS`, skip such
 * a tool), and a `pattern` ran as a native regular expression, `^(a+)+$` against 29 characters taking 18 s. ptc
 * checks each result against the tool's converted output schema (the enforced subset, in which an upstream's
 * regular expressions are dropped, with a warning), as it checks any tool's.
 */
const OUTPUT_SCHEMAS: jsonSchemaValidator = {
  getValidator<T>(): JsonSchemaValidator<T> {
    return (input) => ({ valid: true, data: input as T, errorMessage: undefined })
  },
}

/**
 * The most tools ptc serves from one upstream (`UpstreamConnectionOptions.maxTools`), and the most pages one
 * reading of its tool list asks for. Every tool goes into the text the model reads, and a reading is kept whole
 * in memory: an upstream that never ended its list (a cursor loop) grew the host by 100 MiB a second until it
 * ran out of memory, and `ptc serve` never started.
 */
export const MAX_UPSTREAM_TOOLS = 1000

/**
 * The most characters of tools one reading of a tool list keeps (names, descriptions, schemas and the rest, as
 * `listedChars` counts them): the tools past it are left out with a warning. Each page is bounded by the message
 * bound (10 MiB), but an upstream whose pages each listed a 9 MB tool ran the host out of memory after 337 pages.
 * Real lists are far below it (a few thousand characters a tool).
 */
const MAX_LISTED_CHARS = 32 * 1024 * 1024

/** The longest name of an upstream tool, in characters (the MCP specification's 128): a longer one skips its tool. */
const MAX_UPSTREAM_TOOL_NAME_CHARS = 128
/** Ids of cancelled requests a connection remembers, to pass over late answers to them. */
const MAX_CANCELLED_KEPT = 4096
/** A character no tool name may hold: C0 controls (NUL, line ends, escape), DEL and C1 controls. */
// eslint-disable-next-line no-control-regex -- control characters are what it finds
const CONTROL_CHARACTER = /[\u0000-\u001f\u007f-\u009f]/
/** Bidirectional controls: a name holding one shows reversed, in the SDK text and in an approval's question. */
const BIDI_CONTROL = /[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/
/** Half of a surrogate pair, alone. */
const LONE_SURROGATE = /\p{Cs}/u
/** Nothing a reader sees: spaces and format characters (zero-width ones, a byte order mark) only. */
const INVISIBLE = /^[\p{White_Space}\p{Cf}]*$/u

/**
 * The readings of a tool list after changes the upstream announced are at least this far apart (ms), and
 * `RELIST_COST_FACTOR` times as long as the last one took: at most a fifth of the host's time goes to them.
 */
const RELIST_GAP_MS = 250
const RELIST_COST_FACTOR = 4

/** How many of its unusable messages one connection to an upstream reports (`onWarning`). */
const MAX_PROTOCOL_WARNINGS = 10

/**
 * One upstream MCP server: a command to spawn over stdio, a server at a URL (Streamable HTTP, or the legacy
 * HTTP+SSE transport), or (in-process) a transport factory.
 */
export type UpstreamSpec =
  | {
      readonly name?: string
      readonly command: string
      readonly args?: readonly string[]
      readonly env?: Record<string, string>
      readonly cwd?: string
    }
  | UpstreamUrlSpec
  | { readonly name?: string; readonly transport: () => Transport }

/** An upstream served over HTTP. */
export interface UpstreamUrlSpec {
  readonly name?: string
  /** The server's MCP endpoint (`http:` or `https:`), e.g. `https://mcp.example/mcp`. */
  readonly url: string
  /** Sent with every request, e.g. `{ Authorization: 'Bearer …' }`. */
  readonly headers?: Readonly<Record<string, string>>
  /**
   * `streamable-http`, `sse` (the legacy HTTP+SSE transport), or `auto` (default): Streamable HTTP, and the
   * legacy transport when the server refuses it (an old server answers its POST with a 4xx).
   */
  readonly protocol?: 'streamable-http' | 'sse' | 'auto'
}

/** Reconnection timing: the first retry after `initialMs`, doubling up to `maxMs`. */
export interface ReconnectOptions {
  readonly initialMs?: number
  readonly maxMs?: number
}

export interface UpstreamConnectionOptions {
  readonly reconnect?: ReconnectOptions
  /**
   * Timeout of each upstream request (connect, call) and of one whole reading of the tool list, all its
   * pages together. Default: the SDK's 60 s.
   */
  readonly requestTimeoutMs?: number
  /** The most tools served from this upstream (the rest are left out with a warning). Default `MAX_UPSTREAM_TOOLS`. */
  readonly maxTools?: number
  /**
   * The most bytes of one message read from the upstream: a stdio line, an HTTP answer, one server-sent event.
   * An answer past it fails its call; past it on a stream no call owns (stdio, an event stream opened by GET) the
   * connection is reset. Default `MAX_UPSTREAM_MESSAGE_BYTES` (10 MiB).
   */
  readonly maxMessageBytes?: number
  /**
   * Where the upstream's stderr goes (spawned upstreams). Default: this process's stderr. At most
   * `MAX_STDERR_BACKLOG` bytes wait for it to take them; the rest is dropped and counted in a warning.
   */
  readonly stderr?: NodeJS.WritableStream
  /** Called after every successful (re)connection with the upstream's current tool list. */
  readonly onTools: (connection: UpstreamConnection, tools: readonly Tool[]) => void
  readonly onWarning: (message: string) => void
}

/**
 * A client connection to one upstream MCP server that survives the server's
 * death: in-flight calls fail, the connection is re-established in the
 * background (with backoff) and on the next call, and the tool list is
 * re-read after every reconnection and whenever the server says it changed
 * (`notifications/tools/list_changed`).
 */
export class UpstreamConnection {
  /** The name given with the spec, else the server's reported name once connected. */
  label: string
  #client: Client | undefined
  #connecting: Promise<Client> | undefined
  #retry: NodeJS.Timeout | undefined
  #delay: number
  #closed = false
  #serverName: string | undefined
  #relisting: Promise<void> | undefined
  /** An `auto` URL upstream refused Streamable HTTP: it speaks the legacy SSE transport. */
  #legacySse = false
  #relistAgain = false
  /** When the last reading of the list after a change ended (`performance.now()`), and how long it took. */
  #lastRelist = { end: Number.NEGATIVE_INFINITY, took: 0 }
  /** Tells a reading after a change that failed, a few times per connection (`fewTimes`). */
  #relistFailed = this.#relistWarnings()
  /** Why a client's connection was reset from this side (an event stream or stdio line past `maxMessageBytes`). */
  readonly #resets = new WeakMap<Client, string>()

  constructor(
    readonly spec: UpstreamSpec,
    readonly options: UpstreamConnectionOptions,
  ) {
    checkBound('maxTools', options.maxTools)
    checkBound('maxMessageBytes', options.maxMessageBytes, MAX_MESSAGE_BYTES)
    this.label = spec.name ?? ('command' in spec ? spec.command : 'url' in spec ? new URL(spec.url).host : 'upstream')
    this.#delay = options.reconnect?.initialMs ?? 100
  }

  /** The server's reported `serverInfo.name`, after the first connection. */
  get serverName(): string | undefined {
    return this.#serverName
  }

  get connected(): boolean {
    return this.#client !== undefined
  }

  /** Connect (single flight); resolves with the client once the tool list is read. */
  connect(): Promise<Client> {
    if (this.#closed)
      return Promise.reject(new UpstreamUnavailableError(this.label, `upstream ${this.label} is closed`))
    if (this.#client !== undefined) return Promise.resolve(this.#client)
    this.#connecting ??= this.#open().finally(() => (this.#connecting = undefined))
    return this.#connecting
  }

  /** Call one upstream tool; reconnects first when the upstream is down. */
  async call(name: string, args: unknown, signal: AbortSignal): Promise<CallToolResult> {
    let client: Client
    try {
      client = await this.connect()
    } catch (error) {
      throw error instanceof UpstreamUnavailableError
        ? error
        : new UpstreamUnavailableError(this.label, `upstream ${this.label} is unavailable: ${messageOf(error)}`, {
            cause: error,
          })
    }
    // A signal of this request alone, released once it settles. The SDK never removes its listener from a request's
    // signal, and when that signal aborts it sends notifications/cancelled whether or not the request was answered:
    // the run's signal, aborted when its program ends, cancelled every call of the program, answered long before
    // (2 741 notifications at once, each a new socket to an HTTP upstream).
    const own = batchSignal(signal)
    const options =
      this.options.requestTimeoutMs === undefined
        ? { signal: own.signal }
        : { signal: own.signal, timeout: this.options.requestTimeoutMs }
    const params = { name, arguments: (args ?? {}) as Record<string, unknown> }
    try {
      return (await client.callTool(params, undefined, options)) as CallToolResult
    } catch (error) {
      if (signal.aborted) throw error
      const reset = this.#resets.get(client)
      const why = reset === undefined ? messageOf(error) : `the connection was reset: ${reset}`
      throw new Error(`upstream ${this.label}: ${why}`, { cause: error })
    } finally {
      own.release()
    }
  }

  /** Stop reconnecting and close the client (which stops a spawned server). */
  async close(): Promise<void> {
    this.#closed = true
    clearTimeout(this.#retry)
    // A connection being made is closed now: a silent upstream held close() until the connect's timeout (a minute).
    for (const opening of this.#opening) await opening.close().catch(() => undefined)
    const client = this.#client ?? (await this.#connecting?.catch(() => undefined))
    this.#client = undefined
    await client?.close().catch(() => undefined)
  }

  async #open(): Promise<Client> {
    let client = this.#newClient()
    const first = client
    try {
      client = await this.#connect(client)
      const tools = await this.#listTools(client)
      if (this.#closed) throw new UpstreamUnavailableError(this.label, `upstream ${this.label} is closed`)
      this.#serverName = client.getServerVersion()?.name
      this.#client = client
      this.#relistFailed = this.#relistWarnings()
      this.#delay = this.options.reconnect?.initialMs ?? 100
      client.onclose = () => this.#lost(client)
      this.options.onTools(this, tools)
      return client
    } catch (error) {
      await client.close().catch(() => undefined)
      this.#schedule()
      throw new UpstreamUnavailableError(
        this.label,
        `upstream ${this.label} could not be connected: ${messageOf(error)}`,
        { cause: error },
      )
    } finally {
      // The legacy transport's client, when the first fell back to it (`#connect`), was made here too.
      this.#opening.delete(first)
      this.#opening.delete(client)
    }
  }

  /** Clients being connected (`#open`), which `close` closes at once. */
  readonly #opening = new Set<Client>()

  #newClient(): Client {
    const client = new Client({ name: 'ptc-serve', version: '0.1.0' }, { jsonSchemaValidator: OUTPUT_SCHEMAS })
    this.#opening.add(client)
    // Set before connecting, so that a change announced right after the handshake is not missed.
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => this.#listChanged(client))
    // What the SDK drops as it reads (a line that is not JSON, an answer to no request: a call then waits for its
    // timeout, which names nothing) is told to the operator, a few times per connection.
    const warn = fewTimes((message) => this.options.onWarning(message), 'its further such messages on this connection')
    client.onerror = (error) => {
      // Its stdin closed while it runs: no request reaches it any more, and each would wait for its timeout.
      if (brokenPipe(error)) {
        this.#resets.set(
          client,
          `its stdin was closed (${(error as { code?: string }).code}): it reads no more requests`,
        )
        void client.close().catch(() => undefined)
        return
      }
      if (dropped(error) && !this.#answersCancelled(client, error)) {
        warn(
          `upstream ${this.label} sent what could not be used, and it was dropped: ${textHead(error.message.replace(/\s+/g, ' '), 300)}`,
        )
      }
    }
    return client
  }

  /** Requests each client cancelled (their calls aborted or timed out), the most recent `MAX_CANCELLED_KEPT`. */
  readonly #cancelled = new WeakMap<Client, Set<string | number>>()

  /** `transport`, whose cancellations of requests are noted for `client`. */
  #noteCancelled(client: Client, transport: Transport): Transport {
    const ids = new Set<string | number>()
    this.#cancelled.set(client, ids)
    const send = transport.send.bind(transport)
    transport.send = (message, options) => {
      const id = cancelledRequest(message)
      if (id !== undefined) {
        ids.add(id)
        if (ids.size > MAX_CANCELLED_KEPT) ids.delete(ids.values().next().value as string | number)
      }
      return send(message, options)
    }
    return transport
  }

  /**
   * Whether `error` is the SDK's "unknown message ID" for an answer to a request `client` cancelled: the MCP
   * specification lets an upstream answer a request whose cancellation crossed it, and asks the client to ignore
   * that answer. Not the upstream's fault, and not counted among the few warnings of a connection.
   */
  #answersCancelled(client: Client, error: Error): boolean {
    const prefix = 'Received a response for an unknown message ID: '
    if (!error.message.startsWith(prefix)) return false
    try {
      const id = (JSON.parse(error.message.slice(prefix.length)) as { id?: unknown }).id
      return (typeof id === 'string' || typeof id === 'number') && this.#cancelled.get(client)?.has(id) === true
    } catch {
      return false
    }
  }

  /**
   * Connects `client` and returns the connected client: an `auto` URL upstream that refuses Streamable HTTP
   * (a 4xx answer) is connected again, by a new client, over the legacy SSE transport, which it then keeps.
   */
  async #connect(client: Client): Promise<Client> {
    const spec = this.spec
    try {
      await client.connect(this.#noteCancelled(client, this.#transport(client)), this.#timeout())
      return client
    } catch (error) {
      const status = (error as { code?: unknown }).code
      const refused = typeof status === 'number' && status >= 400 && status < 500
      if (!('url' in spec) || (spec.protocol ?? 'auto') !== 'auto' || this.#legacySse || !refused) throw error
      await client.close().catch(() => undefined)
      this.#legacySse = true
      const legacy = this.#newClient()
      try {
        await legacy.connect(this.#noteCancelled(legacy, this.#transport(legacy)), this.#timeout())
      } catch (legacyError) {
        this.#opening.delete(legacy)
        await legacy.close().catch(() => undefined)
        // Both refused: the first answer is the one that says why (a 401 showed as the legacy transport's 405).
        this.#legacySse = false
        throw new Error(
          `Streamable HTTP was refused (HTTP ${status}: ${messageOf(error)}), and so was the legacy HTTP+SSE transport (${messageOf(legacyError)})`,
          { cause: error },
        )
      }
      return legacy
    }
  }

  #relistWarnings(): (message: string) => void {
    return fewTimes(
      (message) => this.options.onWarning(message),
      'its further failures to give its list on this connection',
    )
  }

  #timeout(): { timeout?: number } {
    return this.options.requestTimeoutMs === undefined ? {} : { timeout: this.options.requestTimeoutMs }
  }

  /**
   * The upstream's tool list, every page of it, read within one request timeout: at most `maxTools` tools
   * from at most `maxTools` pages, and a cursor the upstream gave before ends the reading (with a warning
   * each time: the tools read so far are served).
   */
  async #listTools(client: Client): Promise<Tool[]> {
    const max = this.options.maxTools ?? MAX_UPSTREAM_TOOLS
    const timeout = this.options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MSEC
    const deadline = Date.now() + timeout
    const tools: Tool[] = []
    let chars = 0
    const cursors = new Set<string>()
    let cursor: string | undefined
    for (let pages = 0; pages < max; pages++) {
      const late = (): Error => new Error(`its tool list was not read within ${timeout} ms (${pages} pages)`)
      const remaining = deadline - Date.now()
      if (remaining <= 0) throw late()
      let page
      try {
        // Read as any result, each tool then checked on its own: the SDK's own reading refused the whole list, and
        // with it every tool of the upstream, for one malformed tool.
        page = await client.request(
          { method: 'tools/list', params: cursor === undefined ? {} : { cursor } },
          ResultSchema,
          { timeout: remaining },
        )
      } catch (error) {
        // The page's own timeout was what remained of the reading's: its timing out is the reading's, whatever the
        // clock says (a timer measured from a loaded event loop's cached time fires before Date.now() reaches the
        // deadline, and the raw "Request timed out" came through, once in a clean clone's CI beside other work).
        const timedOut = error instanceof SdkMcpError && error.code === (ErrorCode.RequestTimeout as number)
        throw timedOut || Date.now() >= deadline ? late() : error
      }
      const { tools: listed, nextCursor: next } = page as { tools?: unknown; nextCursor?: unknown }
      if (!Array.isArray(listed))
        throw new Error(`its tools/list answer has no list of tools (tools: ${typeof listed})`)
      // null, as some servers write "no more pages", ends the list as an absent cursor does.
      const nextCursor = next ?? undefined
      if (nextCursor !== undefined && typeof nextCursor !== 'string')
        throw new Error(`its tools/list answer's nextCursor is not a string (${typeof nextCursor})`)
      for (const raw of listed as unknown[]) {
        const parsed = ToolSchema.safeParse(raw)
        if (!parsed.success) {
          const name = (raw as { name?: unknown } | null)?.name
          const issue = parsed.error.issues[0]
          const what =
            issue === undefined
              ? 'it is not a tool'
              : `${issue.path.length === 0 ? 'it' : issue.path.join('.')}: ${issue.message}`
          this.options.onWarning(
            `skipped a tool of upstream ${this.label} (${typeof name === 'string' ? JSON.stringify(textHead(name, 40)) : 'without a name'}): ${textHead(what, 300)}`,
          )
          continue
        }
        const tool = parsed.data as Tool
        if (tools.length === max) {
          this.options.onWarning(
            `upstream ${this.label} lists more than ${max} tools: only its first ${max} are served (maxTools)`,
          )
          return tools
        }
        // A name a model could not read or write back (the MCP specification asks for 1 to 128 printable characters).
        const unreadable = unreadableName(tool.name)
        if (unreadable !== undefined) {
          this.options.onWarning(
            `skipped a tool of upstream ${this.label}: its name ${JSON.stringify(tool.name.slice(0, 40))} ${unreadable}`,
          )
          continue
        }
        if (tool.name.length > MAX_UPSTREAM_TOOL_NAME_CHARS) {
          this.options.onWarning(
            `skipped a tool of upstream ${this.label}: its name is ${tool.name.length} characters long, more than ${MAX_UPSTREAM_TOOL_NAME_CHARS} (${JSON.stringify(tool.name.slice(0, 40))}…)`,
          )
          continue
        }
        chars += listedChars(tool, MAX_LISTED_CHARS - chars)
        if (chars > MAX_LISTED_CHARS) {
          this.options.onWarning(
            `upstream ${this.label}'s tool list is longer than ${MAX_LISTED_CHARS} characters: only the ${tools.length} tools before it are served`,
          )
          return tools
        }
        tools.push(tool)
      }
      cursor = nextCursor
      if (cursor === undefined) return tools
      if (cursors.has(cursor)) {
        this.options.onWarning(
          `upstream ${this.label} gave the same tool list cursor twice: only the ${tools.length} tools listed before it are served`,
        )
        return tools
      }
      cursors.add(cursor)
    }
    this.options.onWarning(
      `upstream ${this.label}'s tool list had not ended after ${max} pages: only the ${tools.length} tools on them are served`,
    )
    return tools
  }

  /** The server announced a new tool list: read it (one read at a time; a change during a read reads again). */
  #listChanged(client: Client): void {
    if (this.#relisting !== undefined) {
      this.#relistAgain = true
      return
    }
    this.#relisting = (async () => {
      do {
        // Readings after changes are spaced by what the last one cost: an upstream that announced a change every
        // 50 ms, with a list each reading of which held the host 2.8 s, let a program make 34 calls in 8 s.
        const { end, took } = this.#lastRelist
        const wait = end + Math.max(RELIST_GAP_MS, RELIST_COST_FACTOR * took) - performance.now()
        if (wait > 0) await new Promise<void>((resolve) => setTimeout(resolve, wait).unref())
        this.#relistAgain = false
        if (this.#client !== client || this.#closed) return
        const started = performance.now()
        try {
          const tools = await this.#listTools(client)
          if (this.#client === client && !this.#closed) this.options.onTools(this, tools)
        } catch (error) {
          // Told a few times per connection: an upstream that keeps announcing a list it cannot give would fill the log.
          this.#relistFailed(
            `upstream ${this.label}: could not re-read its tool list after a change: ${messageOf(error)}`,
          )
        }
        this.#lastRelist = { end: performance.now(), took: performance.now() - started }
      } while (this.#relistAgain)
    })().finally(() => (this.#relisting = undefined))
  }

  #transport(client: Client): Transport {
    const spec = this.spec
    if ('transport' in spec) return spec.transport()
    const maxBytes = this.options.maxMessageBytes ?? MAX_UPSTREAM_MESSAGE_BYTES
    if ('url' in spec) {
      const url = new URL(spec.url)
      const requestInit = { headers: { ...spec.headers } }
      const http = new UpstreamFetch(maxBytes, (answer) => this.#oversized(client, transport, answer))
      const { fetch } = http
      const transport =
        spec.protocol === 'sse' || this.#legacySse
          ? new SSEClientTransport(url, { requestInit, fetch })
          : new StreamableHTTPClientTransport(url, { requestInit, fetch })
      // Set before the client connects, which calls it before its own handler.
      transport.onmessage = (message) => {
        if ('id' in message && message.id !== undefined && ('result' in message || 'error' in message))
          http.answered(message.id)
      }
      return transport
    }
    const transport = useLineBuffer(
      sendInTurn(
        new StdioClientTransport({
          command: spec.command,
          args: [...(spec.args ?? [])],
          ...(spec.env !== undefined && { env: spec.env }),
          ...(spec.cwd !== undefined && { cwd: spec.cwd }),
          stderr: 'pipe',
          maxBufferSize: maxBytes,
        }),
      ),
      maxBytes,
    )
    // The SDK closes the connection on a line past its bound, and names the bound only to this handler (the
    // client chains its own after it).
    transport.onerror = (error) => {
      if (error.message.startsWith('ReadBuffer exceeded'))
        this.#resets.set(client, `a line of its output went past ${maxBytes} bytes (maxMessageBytes)`)
    }
    const stderr = transport.stderr
    if (stderr !== null) {
      forwardStderr(stderr as Readable, this.options.stderr ?? process.stderr, (bytes) =>
        this.options.onWarning(
          `upstream ${this.label}: ${bytes} bytes of its stderr were dropped (the stderr it goes to was not read as fast as it wrote)`,
        ),
      )
    }
    return transport
  }

  /**
   * An HTTP answer went past `maxMessageBytes`: the call it answered fails with that reason (delivered as the
   * upstream's error answer, before the transport sees its body fail); an event stream no call owns cannot be
   * read on, and the connection is reset (its calls fail, it reconnects).
   */
  #oversized(client: Client, transport: Transport, answer: OversizedAnswer): void {
    if (answer.requestId !== undefined) {
      transport.onmessage?.({
        jsonrpc: '2.0',
        id: answer.requestId,
        error: { code: ErrorCode.InternalError, message: answer.message },
      })
      return
    }
    this.#resets.set(client, answer.message)
    transport.close().catch(() => undefined)
  }

  #lost(client: Client): void {
    if (this.#client !== client) return
    this.#client = undefined
    if (this.#closed) return
    const reset = this.#resets.get(client)
    this.options.onWarning(
      `upstream ${this.label} disconnected${reset === undefined ? '' : ` (reset: ${reset})`}; in-flight calls failed; reconnecting`,
    )
    this.#schedule()
  }

  #schedule(): void {
    if (this.#closed || this.#retry !== undefined) return
    const delay = this.#delay
    this.#delay = Math.min(delay * 2, this.options.reconnect?.maxMs ?? 5_000)
    this.#retry = setTimeout(() => {
      this.#retry = undefined
      if (this.#client === undefined && !this.#closed)
        this.connect().catch((error: unknown) => this.options.onWarning(messageOf(error)))
    }, delay)
    this.#retry.unref()
  }
}

export function messageOf(error: unknown): string {
  if (!(error instanceof Error)) return String(error)
  // fetch's own failures say only "fetch failed": why is in the cause (e.g. UND_ERR_HEADERS_OVERFLOW).
  const cause = error.cause
  if (!/fetch failed$/.test(error.message) || !(cause instanceof Error)) return error.message
  const code = (cause as { code?: unknown }).code
  return `${error.message}: ${cause.message}${typeof code === 'string' && !cause.message.includes(code) ? ` (${code})` : ''}`
}

/**
 * About the characters of JSON `value` takes (its strings and keys, and a few for each value), counted up to just past
 * `limit`: iterative, so a schema nested thousands deep is counted like any other.
 */
function listedChars(value: unknown, limit: number): number {
  let chars = 0
  const stack: unknown[] = [value]
  while (stack.length > 0 && chars <= limit) {
    const node = stack.pop()
    if (typeof node === 'string') chars += node.length + 2
    else if (typeof node !== 'object' || node === null) chars += 4
    else if (Array.isArray(node)) {
      chars += 2
      for (const item of node) stack.push(item)
    } else {
      chars += 2
      for (const [key, item] of Object.entries(node)) {
        chars += key.length + 3
        stack.push(item)
      }
    }
  }
  return chars
}

/**
 * `warn` for at most `MAX_PROTOCOL_WARNINGS` of what one connection does again and again; the last one says that
 * `further` (what comes after it) are not reported.
 */
function fewTimes(warn: (message: string) => void, further: string): (message: string) => void {
  let told = 0
  return (message) => {
    if (told >= MAX_PROTOCOL_WARNINGS) return
    told++
    warn(told === MAX_PROTOCOL_WARNINGS ? `${message} (${further} are not reported)` : message)
  }
}

/** Whether the client's error is a write to an upstream's stdin that its process closed (it runs on, reading nothing). */
function brokenPipe(error: Error): boolean {
  const code = (error as { code?: unknown }).code
  return code === 'EPIPE' || code === 'ERR_STREAM_DESTROYED' || code === 'ERR_STREAM_WRITE_AFTER_END'
}

/** Why a tool named `name` cannot be served (a model could not read it, or write it back), or undefined. */
function unreadableName(name: string): string | undefined {
  if (name === '') return 'is empty'
  if (CONTROL_CHARACTER.test(name)) return 'is not printable (it holds a control character)'
  if (LONE_SURROGATE.test(name)) return 'is not well-formed Unicode (it holds a lone surrogate)'
  if (BIDI_CONTROL.test(name)) return 'holds a bidirectional control character (it would show reversed)'
  if (INVISIBLE.test(name)) return 'has no visible character'
  return undefined
}

/**
 * Whether the client's error is a message it dropped as it read (a line that is not JSON or not JSON-RPC, an answer
 * to no request, a message of no known kind), rather than a transport's failure, which fails calls and says so.
 */
function dropped(error: Error): boolean {
  return (
    error instanceof SyntaxError ||
    error.name === 'ZodError' ||
    /^(Received a response for an unknown message ID|Received a progress notification for an unknown token|Unknown message type)\b/.test(
      error.message,
    )
  )
}
