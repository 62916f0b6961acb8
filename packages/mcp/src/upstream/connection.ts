import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { DEFAULT_REQUEST_TIMEOUT_MSEC } from '@modelcontextprotocol/sdk/shared/protocol.js'
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js'
import { ToolListChangedNotificationSchema, type CallToolResult, type Tool } from '@modelcontextprotocol/sdk/types.js'
import { textHead } from '@ptc/tools'
import { batchSignal } from '@ptc/tools/executor'
import type { JsonSchemaValidator, jsonSchemaValidator } from '@modelcontextprotocol/sdk/validation'
import { checkBound, UpstreamUnavailableError } from '../errors.js'
import {
  bothTransportsRefused,
  connectionWasReset,
  stdinClosed,
  upstreamCallFailed,
  upstreamClosed,
  upstreamNotConnected,
  upstreamUnavailable,
} from '../messages.js'
import { MAX_MESSAGE_BYTES, MAX_UPSTREAM_MESSAGE_BYTES } from './bounded-fetch.js'
import { CancelledRequests } from './cancelled-requests.js'
import { brokenPipe, dropped, fewTimes, messageOf } from './client-errors.js'
import { readToolList } from './tool-list.js'
import { httpTransport, stdioTransport } from './transport.js'

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
 * The readings of a tool list after changes the upstream announced are at least this far apart (ms), and
 * `RELIST_COST_FACTOR` times as long as the last one took: at most a fifth of the host's time goes to them.
 */
const RELIST_GAP_MS = 250
const RELIST_COST_FACTOR = 4

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
    if (this.#closed) return Promise.reject(new UpstreamUnavailableError(this.label, upstreamClosed(this.label)))
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
        : new UpstreamUnavailableError(this.label, upstreamUnavailable(this.label, messageOf(error)), { cause: error })
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
      const why = reset === undefined ? messageOf(error) : connectionWasReset(reset)
      throw new Error(upstreamCallFailed(this.label, why), { cause: error })
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
      if (this.#closed) throw new UpstreamUnavailableError(this.label, upstreamClosed(this.label))
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
      throw new UpstreamUnavailableError(this.label, upstreamNotConnected(this.label, messageOf(error)), {
        cause: error,
      })
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
        this.#resets.set(client, stdinClosed((error as { code?: string }).code))
        void client.close().catch(() => undefined)
        return
      }
      if (dropped(error) && !this.#cancelled.answered(client, error)) {
        const what = textHead(error.message.replace(/\s+/g, ' '), 300)
        warn(`upstream ${this.label} sent what could not be used, and it was dropped: ${what}`)
      }
    }
    return client
  }

  /** Requests each client cancelled (their calls aborted or timed out): late answers to them are passed over. */
  readonly #cancelled = new CancelledRequests()

  /**
   * Connects `client` and returns the connected client: an `auto` URL upstream that refuses Streamable HTTP
   * (a 4xx answer) is connected again, by a new client, over the legacy SSE transport, which it then keeps.
   */
  async #connect(client: Client): Promise<Client> {
    const spec = this.spec
    try {
      await client.connect(this.#cancelled.note(client, this.#transport(client)), this.#timeout())
      return client
    } catch (error) {
      const status = (error as { code?: unknown }).code
      const refused = typeof status === 'number' && status >= 400 && status < 500
      if (!('url' in spec) || (spec.protocol ?? 'auto') !== 'auto' || this.#legacySse || !refused) throw error
      await client.close().catch(() => undefined)
      this.#legacySse = true
      const legacy = this.#newClient()
      try {
        await legacy.connect(this.#cancelled.note(legacy, this.#transport(legacy)), this.#timeout())
      } catch (legacyError) {
        this.#opening.delete(legacy)
        await legacy.close().catch(() => undefined)
        // Both refused: the first answer is the one that says why (a 401 showed as the legacy transport's 405).
        this.#legacySse = false
        throw new Error(bothTransportsRefused(status, messageOf(error), messageOf(legacyError)), { cause: error })
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

  /** The upstream's tool list (`readToolList`), under this connection's bounds. */
  #listTools(client: Client): Promise<Tool[]> {
    return readToolList(client, {
      label: this.label,
      maxTools: this.options.maxTools ?? MAX_UPSTREAM_TOOLS,
      timeoutMs: this.options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MSEC,
      onWarning: (message) => this.options.onWarning(message),
    })
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
          // Told a few times per connection: an upstream that keeps announcing a list it cannot give would fill
          // the log.
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
    const reset = (why: string): void => void this.#resets.set(client, why)
    if ('url' in spec)
      return httpTransport(spec.url, spec.headers, spec.protocol === 'sse' || this.#legacySse, maxBytes, reset)
    const server = {
      command: spec.command,
      args: [...(spec.args ?? [])],
      ...(spec.env !== undefined && { env: spec.env }),
      ...(spec.cwd !== undefined && { cwd: spec.cwd }),
    }
    return stdioTransport(server, maxBytes, reset, this.options.stderr, (bytes) =>
      this.options.onWarning(
        `upstream ${this.label}: ${bytes} bytes of its stderr were dropped (the stderr it goes to was not read as ` +
          'fast as it wrote)',
      ),
    )
  }

  #lost(client: Client): void {
    if (this.#client !== client) return
    this.#client = undefined
    if (this.#closed) return
    const reset = this.#resets.get(client)
    this.options.onWarning(
      `upstream ${this.label} disconnected${reset === undefined ? '' : ` (reset: ${reset})`}; in-flight calls ` +
        'failed; reconnecting',
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
