/** The flags of `ptc serve`: their `util.parseArgs` table, which need `--http`, and the usage text. */
import { DEFAULT_DISCOVERY_BUDGET_CHARS } from '@ptc/ptc'
import { DEFAULT_LIMITS, type CodeRunLimits } from '@ptc/sandbox'
import { HTTP_DEFAULTS } from './server/http/options.js'
import { MAX_UPSTREAM_MESSAGE_BYTES } from './upstream/bounded-fetch.js'
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
  return (
    `Usage: ptc serve --upstream "[name=]command [args…]" [--upstream …] [options]

Serves code mode over MCP: one run_code tool whose programs call every upstream tool as tools["<name>.<tool>"],
next to the local tools of a ptc.config.ts (by their names).
  --upstream CMD      an upstream MCP server to spawn (stdio); repeatable; ` +
    `"fs=npx -y @modelcontextprotocol/server-filesystem /tmp";
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
  --max-sub-calls N   tool calls per program (default ${limits.maxSubCalls}; ` +
    `at most ${limits.maxPendingSubCalls} wait at once,
                      ${MAX_PARALLEL_SUB_CALLS} concurrency-safe ones overlap)
  --max-result-chars N  the longest JSON text of one tool result a program receives (default ${limits.maxResultChars})
  --max-argument-chars N  the longest JSON text of one tool call's arguments from a program ` +
    `(default ${limits.maxArgumentChars})

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
                      Origin are accepted; ` +
    `by default only http://127.0.0.1:PORT, http://localhost:PORT, http://[::1]:PORT
  --allow-host NAME   accept Host: NAME (or NAME:PORT; without a port: the bound one) too; repeatable.
                      By default Host must be a loopback name (loopback bind), the bind address (other binds),
                      or a loopback name or local interface address (0.0.0.0, ::)
  --max-body-bytes N  largest request body, else 413 (default ${HTTP_DEFAULTS.maxBodyBytes})
  --session-idle-ms MS  close a session after MS without an open request (default ${HTTP_DEFAULTS.sessionIdleMs})
  --max-sessions N    most live sessions; an initialize past it gets 503 with Retry-After ` +
    `(default ${HTTP_DEFAULTS.maxSessions})
  --max-connections N   most open connections, authenticated or not; more are closed at once ` +
    `(default ${HTTP_DEFAULTS.maxConnections})
  --headers-timeout-ms MS       close a connection whose request headers took longer ` +
    `(default ${HTTP_DEFAULTS.headersTimeoutMs})
  --request-read-timeout-ms MS  408 for a request (headers and body) not received whole in MS ` +
    `(default ${HTTP_DEFAULTS.requestReadTimeoutMs})`
  )
}

const DISCOVERY_BUDGET = DEFAULT_DISCOVERY_BUDGET_CHARS

/** The usage with the sandbox's own default limits. */
export const SERVE_USAGE = serveUsage()

export const HTTP_ONLY = [
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
export const SERVE_OPTIONS = {
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
