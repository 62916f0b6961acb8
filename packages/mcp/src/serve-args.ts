import { parseArgs } from 'node:util'
import type { DiscoveryOptions } from '@ptc/ptc'
import { MAX_TIMER_MS, type CodeRunLimits } from '@ptc/sandbox'
import { closestName } from '@ptc/tools'
import { McpServeUsageError } from './errors.js'
import { isBearerToken } from './server/http/auth.js'
import { isLoopbackHost, parseAllowedHost, parseOrigin } from './server/http/names.js'
import { HTTP_ONLY, SERVE_OPTIONS, TOKEN_ENV } from './serve-flags.js'
import { resolveHttpOptions, type HttpServeOptions } from './server/http/options.js'
import { parseUpstreamCommand, parseUpstreamHeader, type UpstreamCommand } from './upstream/command-line.js'
import { MAX_MESSAGE_BYTES } from './upstream/bounded-fetch.js'

export { SERVE_USAGE, serveUsage, TOKEN_ENV } from './serve-flags.js'

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
  /**
   * `--cpu`, `--memory`, `--max-output`, `--max-sub-calls`, `--max-result-chars`, `--max-argument-chars` (and
   * `--wall` and `--cpu`, else `--timeout`, as `wallMs` and `cpuMs`): they win over the defaults.
   */
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
        `--no-auth is allowed only with a loopback --host (127.0.0.1, ::1, localhost), not ${args.host}: ` +
          'a non-loopback bind always needs a token',
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
