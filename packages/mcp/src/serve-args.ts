import { parseArgs } from 'node:util'
import { DEFAULT_DISCOVERY_BUDGET_CHARS, type DiscoveryOptions } from '@ptc/ptc'
import { DEFAULT_LIMITS, MAX_TIMER_MS, type CodeRunLimits } from '@ptc/sandbox'
import { closestName } from '@ptc/tools'
import { McpServeUsageError } from './errors.js'
import { isBearerToken } from './server/http/auth.js'
import { isLoopbackHost, parseAllowedHost, parseOrigin } from './server/http/names.js'
import { HTTP_DEFAULTS, resolveHttpOptions, type HttpServeOptions } from './server/http/options.js'
import { parseUpstreamCommand, parseUpstreamHeader, type UpstreamCommand } from './upstream/command-line.js'
import { MAX_MESSAGE_BYTES, MAX_UPSTREAM_MESSAGE_BYTES } from './upstream/bounded-fetch.js'
import { MAX_UPSTREAM_TOOLS } from './upstream/connection.js'

/** The environment variable a bearer token for `--http` can come from (`--token` wins). */
export const TOKEN_ENV = 'PTC_SERVE_TOKEN'

/** Concurrency-safe sub-calls of one run that may overlap (the PTC executor's default). */
const MAX_PARALLEL_SUB_CALLS = 10

/**
 * The usage of `ptc serve`, showing `limits` as the defaults of every run (the `ptc` CLI passes its own,
 * sized for a model's context; standalone, the sandbox's `DEFAULT_LIMITS`).
 */
export function serveUsage(limits: Readonly<CodeRunLimits> = DEFAULT_LIMITS): string {
  return `Usage: ptc serve --upstream "[name=]command [args…]" [--upstream …] [options]

Serves code mode over MCP: one run_code tool whose programs call every upstream tool as tools["<name>.<tool>"],
next to the local tools of a ptc.config.ts (by their names).
  --upstream CMD      an upstream MCP server to spawn (stdio); repeatable; "fs=npx -y @modelcontextprotocol/server-filesystem /tmp";
                      or the URL of one served over HTTP: "web=https://mcp.example/mcp" (Streamable HTTP, else the
                      legacy HTTP+SSE transport); optional when the config gives tools
  --upstream-header "NAME=Header: value"   a header every request to the URL upstream NAME carries (repeatable),
                      e.g. "web=Authorization: Bearer TOKEN"; a command-line argument is visible to other local users
  --config FILE       the config whose tools, setup (policies, guards), approval, limits and sandbox apply
                      (default: ptc.config.ts, .mts, .js or .mjs in the working directory; read by the ptc command)
  --mode code|both    code (default): only run_code; both: the upstream tools as well
  --sandbox quickjs|isolated-vm   the sandbox backend (default: the config's, else quickjs)
  --session FILE      append every call and sub-call to FILE (JSON Lines)
  --sandbox-sessions  each client connection (MCP session) gets a sandbox session: its programs share their
                      top-level declarations and globalThis, until it disconnects
  --allow-missing     start even when an upstream cannot be connected (it is retried in the background and
                      its tools appear when it connects); without it, such an upstream fails the start (exit 1)
  --max-upstream-tools N  the most tools served from each upstream; the rest are left out with a warning
                      (default ${MAX_UPSTREAM_TOOLS})
  --max-upstream-message-bytes N  the longest message read from an upstream (a stdio line, an HTTP answer,
                      one server-sent event); a longer answer fails its call (default ${MAX_UPSTREAM_MESSAGE_BYTES})
  -h, --help          this text

Limits of each program (what it prints goes to the model: the defaults are sized for its context; the flags
win over a config's limits):
  --timeout MS        --cpu and --wall of each program at once (each of those wins over it), and the limit of
                      each upstream request (default: the MCP SDK's 60000 ms)
  --wall MS           wall-clock limit of each program (default ${limits.wallMs} ms)
  --cpu MS            guest CPU time; waiting on tools is not charged (default ${limits.cpuMs} ms)
  --memory MB         sandbox memory in MiB (default ${limits.memoryBytes / 1024 / 1024})
  --max-output BYTES  logs + value returned to the client (default ${limits.maxOutputBytes})
  --max-sub-calls N   tool calls per program (default ${limits.maxSubCalls}; at most ${limits.maxPendingSubCalls} wait at once,
                      ${MAX_PARALLEL_SUB_CALLS} concurrency-safe ones overlap)
  --max-result-chars N  the longest JSON text of one tool result a program receives (default ${limits.maxResultChars})
  --max-argument-chars N  the longest JSON text of one tool call's arguments from a program (default ${limits.maxArgumentChars})

Tool discovery (for large catalogs; the flags win over a config's discovery):
  --discovery-budget CHARS  past this many characters of declarations and guidance, run_code's description lists
                      the tools by namespace and clients get the search_tools tool (default ${DISCOVERY_BUDGET})
  --always-load NAME  a tool whose declaration is always given (repeatable)
  --no-discovery      every declaration always, however many
  Approval: a call that a policy sends for approval is asked of the MCP client that made it, through
  elicitation, when the client supports it (a config's approval wins); otherwise it is denied.

Streamable HTTP (instead of stdio):
  --http PORT         serve at http://HOST:PORT/mcp (0: a free port)
  --host HOST         the bind address (default ${HTTP_DEFAULTS.host}); a non-loopback one needs a token
  --token TOKEN       the bearer token clients send as "Authorization: Bearer TOKEN" (at least 16 characters);
                      default: $${TOKEN_ENV}, else a generated one printed on stderr at start.
                      Prefer $${TOKEN_ENV}: a command-line argument is visible to other local users
  --no-auth           no token (only with a loopback --host: 127.0.0.1, ::1, localhost)
  --allow-origin URL  accept browser requests from this origin too (with CORS); repeatable. Requests without
                      Origin are accepted; by default only http://127.0.0.1:PORT, http://localhost:PORT, http://[::1]:PORT
  --allow-host NAME   accept Host: NAME (or NAME:PORT; without a port: the bound one) too; repeatable.
                      By default Host must be a loopback name (loopback bind), the bind address (other binds),
                      or a loopback name or local interface address (0.0.0.0, ::)
  --max-body-bytes N  largest request body, else 413 (default ${HTTP_DEFAULTS.maxBodyBytes})
  --session-idle-ms MS  close a session after MS without an open request (default ${HTTP_DEFAULTS.sessionIdleMs})
  --max-sessions N    most live sessions; an initialize past it gets 503 with Retry-After (default ${HTTP_DEFAULTS.maxSessions})
  --max-connections N   most open connections, authenticated or not; more are closed at once (default ${HTTP_DEFAULTS.maxConnections})
  --headers-timeout-ms MS       close a connection whose request headers took longer (default ${HTTP_DEFAULTS.headersTimeoutMs})
  --request-read-timeout-ms MS  408 for a request (headers and body) not received whole in MS (default ${HTTP_DEFAULTS.requestReadTimeoutMs})`
}

const DISCOVERY_BUDGET = DEFAULT_DISCOVERY_BUDGET_CHARS

/** The usage with the sandbox's own default limits. */
export const SERVE_USAGE = serveUsage()

/** What the host serving adds to the command line (the `ptc` command, from a config). */
export interface ServeArgsOptions {
  /** Local tools are served: `--upstream` may be left out. */
  readonly localTools?: boolean
  /** The sandbox when `--sandbox` is not given (default `quickjs`). */
  readonly sandbox?: 'quickjs' | 'isolated-vm'
}

export interface ServeArgs {
  upstreams: UpstreamCommand[]
  mode: 'code' | 'both'
  sandbox: 'quickjs' | 'isolated-vm'
  /** `--help`: print the usage and exit 0. */
  help: boolean
  http?: number
  host: string
  /** The bearer token given (`--token` or `$PTC_SERVE_TOKEN`); absent: generated at start (unless `noAuth`). */
  token?: string
  tokenSource?: '--token' | typeof TOKEN_ENV
  noAuth: boolean
  allowOrigins: string[]
  allowHosts: string[]
  maxBodyBytes?: number
  sessionIdleMs?: number
  maxSessions?: number
  maxConnections?: number
  headersTimeoutMs?: number
  requestReadTimeoutMs?: number
  session?: string
  /** `--sandbox-sessions`: one sandbox session per client connection. */
  sandboxSessions: boolean
  /** `--allow-missing`: serve even when an upstream cannot be connected at start. */
  allowMissing: boolean
  timeoutMs?: number
  /** `--max-upstream-tools`. */
  maxUpstreamTools?: number
  /** `--max-upstream-message-bytes`. */
  maxUpstreamMessageBytes?: number
  /** `--cpu`, `--memory`, `--max-output`, `--max-sub-calls`, `--max-result-chars`, `--max-argument-chars` (and `--wall` and `--cpu`, else `--timeout`, as `wallMs` and `cpuMs`): they win over the defaults. */
  limits: Partial<CodeRunLimits>
  /** `--no-discovery`, `--discovery-budget`, `--always-load`: what they ask for (each absent when not given). */
  discovery: DiscoveryFlags
}

/** The discovery flags of `ptc serve`: off, or the settings they give. */
export interface DiscoveryFlags {
  readonly off: boolean
  readonly budgetChars?: number
  readonly alwaysLoaded?: readonly string[]
}

/**
 * The executor's `discovery`: the flags over the host's (a config's): `--no-discovery` is off; a budget or
 * always-loaded tools turn it on, over a host's `false` too. Undefined when neither says (the default, on).
 */
export function discoveryOption(
  host: DiscoveryOptions | false | undefined,
  flags: DiscoveryFlags,
): DiscoveryOptions | false | undefined {
  if (flags.off) return false
  if (flags.budgetChars === undefined && flags.alwaysLoaded === undefined) return host
  return {
    ...(host !== false && host),
    ...(flags.budgetChars !== undefined && { budgetChars: flags.budgetChars }),
    ...(flags.alwaysLoaded !== undefined && { alwaysLoaded: flags.alwaysLoaded }),
  }
}

const HTTP_ONLY = [
  'token',
  'no-auth',
  'allow-origin',
  'allow-host',
  'max-body-bytes',
  'session-idle-ms',
  'max-sessions',
  'max-connections',
  'headers-timeout-ms',
  'request-read-timeout-ms',
] as const

/** The options of `ptc serve` (for `util.parseArgs`). */
const SERVE_OPTIONS = {
  upstream: { type: 'string', multiple: true },
  'upstream-header': { type: 'string', multiple: true },
  mode: { type: 'string', default: 'code' },
  sandbox: { type: 'string' },
  http: { type: 'string' },
  host: { type: 'string', default: HTTP_DEFAULTS.host },
  token: { type: 'string' },
  'no-auth': { type: 'boolean', default: false },
  'allow-origin': { type: 'string', multiple: true },
  'allow-host': { type: 'string', multiple: true },
  'max-body-bytes': { type: 'string' },
  'session-idle-ms': { type: 'string' },
  'max-sessions': { type: 'string' },
  'max-connections': { type: 'string' },
  'headers-timeout-ms': { type: 'string' },
  'request-read-timeout-ms': { type: 'string' },
  session: { type: 'string' },
  'sandbox-sessions': { type: 'boolean', default: false },
  'allow-missing': { type: 'boolean', default: false },
  'max-upstream-tools': { type: 'string' },
  'max-upstream-message-bytes': { type: 'string' },
  timeout: { type: 'string' },
  wall: { type: 'string' },
  cpu: { type: 'string' },
  memory: { type: 'string' },
  'max-output': { type: 'string' },
  'max-sub-calls': { type: 'string' },
  'max-result-chars': { type: 'string' },
  'max-argument-chars': { type: 'string' },
  'discovery-budget': { type: 'string' },
  'always-load': { type: 'string', multiple: true },
  'no-discovery': { type: 'boolean', default: false },
  help: { type: 'boolean', short: 'h', default: false },
} as const

/**
 * A `util.parseArgs` error as one line: without its advice about positional arguments (`ptc serve` takes none),
 * with the closest option when an unknown one is a few edits from it.
 */
function parseError(error: unknown): string {
  const message = (error instanceof Error ? error.message : String(error)).split('\n')[0] ?? ''
  const unknown = /^Unknown option '--([^'=]+)'/.exec(message)?.[1]
  const close = unknown === undefined ? undefined : closestName(unknown, Object.keys(SERVE_OPTIONS))
  const head = message.replace(/\. To specify a positional argument.*$/, '')
  return `${head}${close === undefined ? '' : ` (did you mean --${close}?)`}`
}

/** Parse `ptc serve` arguments (`env` for `$PTC_SERVE_TOKEN`). @throws McpServeUsageError */
export function parseServeArgs(
  argv: string[],
  env: Readonly<Record<string, string | undefined>> = process.env,
  options: ServeArgsOptions = {},
): ServeArgs {
  let values
  try {
    ;({ values } = parseArgs({
      args: argv,
      strict: true,
      allowPositionals: false,
      options: SERVE_OPTIONS,
    }))
  } catch (error) {
    throw new McpServeUsageError(parseError(error))
  }
  const base = {
    help: values.help,
    host: values.host,
    noAuth: values['no-auth'],
    allowMissing: values['allow-missing'],
    sandboxSessions: values['sandbox-sessions'],
    allowOrigins: values['allow-origin'] ?? [],
    allowHosts: values['allow-host'] ?? [],
    limits: {},
    discovery: { off: false },
  }
  if (values.help) return { upstreams: [], mode: 'code', sandbox: 'quickjs', ...base }
  const upstreams = withHeaders((values.upstream ?? []).map(parseUpstreamCommand), values['upstream-header'] ?? [])
  if (upstreams.length === 0 && options.localTools !== true)
    throw new McpServeUsageError('give at least one --upstream (or tools in a ptc.config.ts)')
  if (values.mode !== 'code' && values.mode !== 'both')
    throw new McpServeUsageError(`--mode must be code or both, not ${JSON.stringify(values.mode)}`)
  const sandbox = values.sandbox ?? options.sandbox ?? 'quickjs'
  if (sandbox !== 'quickjs' && sandbox !== 'isolated-vm')
    throw new McpServeUsageError(`--sandbox must be quickjs or isolated-vm, not ${JSON.stringify(sandbox)}`)
  const args: ServeArgs = { upstreams, mode: values.mode, sandbox, ...base }
  if (values['max-upstream-tools'] !== undefined)
    args.maxUpstreamTools = positiveInt('--max-upstream-tools', values['max-upstream-tools'], false)
  if (values['max-upstream-message-bytes'] !== undefined) {
    args.maxUpstreamMessageBytes = positiveInt(
      '--max-upstream-message-bytes',
      values['max-upstream-message-bytes'],
      false,
      MAX_MESSAGE_BYTES,
    )
  }
  if (values.timeout !== undefined) args.timeoutMs = positiveInt('--timeout', values.timeout, false, MAX_TIMER_MS)
  // As in `ptc run`: --timeout is the program's CPU and wall at once, each of --cpu and --wall wins over it.
  const wallMs = values.wall === undefined ? args.timeoutMs : positiveInt('--wall', values.wall, false, MAX_TIMER_MS)
  const cpuMs = values.cpu === undefined ? args.timeoutMs : positiveInt('--cpu', values.cpu, false, MAX_TIMER_MS)
  args.limits = {
    ...(wallMs !== undefined && { wallMs }),
    ...(cpuMs !== undefined && { cpuMs }),
    // 2^20 MiB keeps the byte count a safe integer.
    ...(values.memory !== undefined && {
      memoryBytes: positiveInt('--memory', values.memory, false, 2 ** 20) * 1024 * 1024,
    }),
    ...(values['max-output'] !== undefined && {
      maxOutputBytes: positiveInt('--max-output', values['max-output'], false),
    }),
    ...(values['max-sub-calls'] !== undefined && {
      maxSubCalls: positiveInt('--max-sub-calls', values['max-sub-calls'], false),
    }),
    ...(values['max-result-chars'] !== undefined && {
      maxResultChars: positiveInt('--max-result-chars', values['max-result-chars'], false),
    }),
    ...(values['max-argument-chars'] !== undefined && {
      maxArgumentChars: positiveInt('--max-argument-chars', values['max-argument-chars'], false),
    }),
  }
  if (values.session !== undefined) args.session = values.session
  args.discovery = discoveryFlags(values['no-discovery'], values['discovery-budget'], values['always-load'])
  if (values.http === undefined) {
    const stray = HTTP_ONLY.find((flag) => values[flag] !== undefined && values[flag] !== false)
    if (stray !== undefined) throw new McpServeUsageError(`--${stray} needs --http`)
    return args
  }
  args.http = positiveInt('--http', values.http, true)
  if (values['max-body-bytes'] !== undefined)
    args.maxBodyBytes = positiveInt('--max-body-bytes', values['max-body-bytes'], false)
  if (values['session-idle-ms'] !== undefined)
    args.sessionIdleMs = positiveInt('--session-idle-ms', values['session-idle-ms'], false)
  if (values['max-sessions'] !== undefined)
    args.maxSessions = positiveInt('--max-sessions', values['max-sessions'], false)
  if (values['max-connections'] !== undefined)
    args.maxConnections = positiveInt('--max-connections', values['max-connections'], false)
  if (values['headers-timeout-ms'] !== undefined)
    args.headersTimeoutMs = positiveInt('--headers-timeout-ms', values['headers-timeout-ms'], false, MAX_TIMER_MS)
  if (values['request-read-timeout-ms'] !== undefined) {
    args.requestReadTimeoutMs = positiveInt(
      '--request-read-timeout-ms',
      values['request-read-timeout-ms'],
      false,
      MAX_TIMER_MS,
    )
  }
  if (args.noAuth) {
    if (values.token !== undefined) throw new McpServeUsageError('--no-auth and --token exclude each other')
    if (!isLoopbackHost(args.host))
      throw new McpServeUsageError(
        `--no-auth is allowed only with a loopback --host (127.0.0.1, ::1, localhost), not ${args.host}: a non-loopback bind always needs a token`,
      )
  } else if (values.token !== undefined) {
    args.token = values.token
    args.tokenSource = '--token'
  } else if (env[TOKEN_ENV] !== undefined && env[TOKEN_ENV] !== '') {
    args.token = env[TOKEN_ENV]
    args.tokenSource = TOKEN_ENV
  }
  if (args.token !== undefined && !isBearerToken(args.token))
    throw new McpServeUsageError(
      `${args.tokenSource ?? '--token'}: the token must be at least 16 visible ASCII characters (no spaces)`,
    )
  for (const origin of args.allowOrigins)
    if (parseOrigin(origin) === undefined)
      throw new McpServeUsageError(
        `--allow-origin ${JSON.stringify(origin)}: not an http(s) origin (e.g. https://app.example:8443)`,
      )
  for (const host of args.allowHosts)
    if (parseAllowedHost(host) === undefined)
      throw new McpServeUsageError(
        `--allow-host ${JSON.stringify(host)}: not a host name (e.g. mcp.example or mcp.example:8080)`,
      )
  resolveHttpOptions(httpOptions(args, args.http))
  return args
}

/** The discovery flags checked: a usage error names the flag. */
function discoveryFlags(
  off: boolean,
  budget: string | undefined,
  always: readonly string[] | undefined,
): DiscoveryFlags {
  const budgetChars = budget === undefined ? undefined : positiveInt('--discovery-budget', budget, false)
  const blank = always?.find((name) => name.trim() === '')
  if (blank !== undefined) throw new McpServeUsageError(`--always-load needs a tool name, not ${JSON.stringify(blank)}`)
  if (off && (budgetChars !== undefined || always !== undefined)) {
    const flag = budgetChars !== undefined ? '--discovery-budget' : '--always-load'
    throw new McpServeUsageError(`--no-discovery turns discovery off; ${flag} goes with it on: give one or the other`)
  }
  return {
    off,
    ...(budgetChars !== undefined && { budgetChars }),
    ...(always !== undefined && { alwaysLoaded: [...always] }),
  }
}

/** The URL upstreams with the headers of their `--upstream-header` values. */
function withHeaders(upstreams: UpstreamCommand[], values: readonly string[]): UpstreamCommand[] {
  const headers = new Map<string, Record<string, string>>()
  for (const text of values) {
    const { upstream, header, value } = parseUpstreamHeader(text)
    const target = upstreams.find((u) => u.name === upstream)
    if (target === undefined || !('url' in target))
      throw new McpServeUsageError(`--upstream-header ${JSON.stringify(text)}: no URL --upstream is named ${upstream}`)
    headers.set(upstream, { ...headers.get(upstream), [header]: value })
  }
  return upstreams.map((u) => {
    const extra = u.name === undefined ? undefined : headers.get(u.name)
    return extra === undefined || !('url' in u) ? u : { ...u, headers: extra }
  })
}

/** The `listenHttp` options `args` ask for. */
export function httpOptions(args: ServeArgs, port: number): HttpServeOptions {
  return {
    port,
    host: args.host,
    allowOrigins: args.allowOrigins,
    allowHosts: args.allowHosts,
    ...(args.noAuth ? { token: false } : args.token !== undefined && { token: args.token }),
    ...(args.maxBodyBytes !== undefined && { maxBodyBytes: args.maxBodyBytes }),
    ...(args.sessionIdleMs !== undefined && { sessionIdleMs: args.sessionIdleMs }),
    ...(args.maxSessions !== undefined && { maxSessions: args.maxSessions }),
    ...(args.maxConnections !== undefined && { maxConnections: args.maxConnections }),
    ...(args.headersTimeoutMs !== undefined && { headersTimeoutMs: args.headersTimeoutMs }),
    ...(args.requestReadTimeoutMs !== undefined && { requestReadTimeoutMs: args.requestReadTimeoutMs }),
  }
}

function positiveInt(flag: string, text: string, port: boolean, max = Number.MAX_SAFE_INTEGER): number {
  const n = Number(text)
  if (!/^\d+$/.test(text) || !Number.isSafeInteger(n) || (port ? n > 65_535 : n < 1))
    throw new McpServeUsageError(
      `${flag} must be ${port ? 'a port number' : 'a positive integer'}, not ${JSON.stringify(text)}`,
    )
  if (n > max) throw new McpServeUsageError(`${flag} must be at most ${max}, not ${text}`)
  return n
}
