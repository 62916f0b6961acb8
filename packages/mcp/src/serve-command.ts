import { parseArgs } from 'node:util'
import type { CodeRuntime } from '@ptc/sandbox'
import { createQuickJSRuntime } from '@ptc/sandbox-quickjs'
import type { Agent } from '@ptc/tools'
import { JsonlSession } from '@ptc/tools/session'
import { McpServeUsageError } from './errors.js'
import { listenHttp } from './server/http.js'
import { createPtcMcpServer } from './server/ptc-mcp-server.js'
import { startStdio } from './server/stdio.js'
import { parseUpstreamCommand, type UpstreamCommand } from './upstream/command-line.js'

/** The streams `ptc serve` talks on (stdio mode: the MCP channel is stdin/stdout; messages go to stderr). */
export interface ServeIo {
  stdin: NodeJS.ReadableStream
  stdout: NodeJS.WritableStream
  stderr: NodeJS.WritableStream
}

export const SERVE_USAGE = `Usage: ptc serve --upstream "[name=]command [args…]" [--upstream …] [options]

Serves code mode over MCP: one run_code tool whose programs call every upstream tool as tools["<name>.<tool>"].
  --upstream CMD      an upstream MCP server to spawn (stdio); repeatable; "fs=npx -y @modelcontextprotocol/server-filesystem /tmp"
  --mode code|both    code (default): only run_code; both: the upstream tools as well
  --sandbox quickjs|isolated-vm   the sandbox backend (default quickjs)
  --http PORT         serve Streamable HTTP at http://HOST:PORT/mcp instead of stdio
  --host HOST         the HTTP bind address (default 127.0.0.1)
  --session FILE      append every call and sub-call to FILE (JSON Lines)
  --timeout MS        wall-clock limit of each program and of each upstream request`

interface ServeArgs {
  upstreams: UpstreamCommand[]
  mode: 'code' | 'both'
  sandbox: 'quickjs' | 'isolated-vm'
  http?: number
  host: string
  session?: string
  timeoutMs?: number
}

/** Parse `ptc serve` arguments. @throws McpServeUsageError */
export function parseServeArgs(argv: string[]): ServeArgs {
  let values
  try {
    ;({ values } = parseArgs({
      args: argv,
      strict: true,
      allowPositionals: false,
      options: {
        upstream: { type: 'string', multiple: true },
        mode: { type: 'string', default: 'code' },
        sandbox: { type: 'string', default: 'quickjs' },
        http: { type: 'string' },
        host: { type: 'string', default: '127.0.0.1' },
        session: { type: 'string' },
        timeout: { type: 'string' },
      },
    }))
  } catch (error) {
    throw new McpServeUsageError(error instanceof Error ? error.message : String(error))
  }
  const upstreams = (values.upstream ?? []).map(parseUpstreamCommand)
  if (upstreams.length === 0) throw new McpServeUsageError('give at least one --upstream')
  if (values.mode !== 'code' && values.mode !== 'both') throw new McpServeUsageError(`--mode must be code or both, not ${JSON.stringify(values.mode)}`)
  if (values.sandbox !== 'quickjs' && values.sandbox !== 'isolated-vm') throw new McpServeUsageError(`--sandbox must be quickjs or isolated-vm, not ${JSON.stringify(values.sandbox)}`)
  const args: ServeArgs = { upstreams, mode: values.mode, sandbox: values.sandbox, host: values.host }
  if (values.http !== undefined) args.http = positiveInt('--http', values.http, true)
  if (values.timeout !== undefined) args.timeoutMs = positiveInt('--timeout', values.timeout, false)
  if (values.session !== undefined) args.session = values.session
  return args
}

function positiveInt(flag: string, text: string, port: boolean): number {
  const n = Number(text)
  if (!/^\d+$/.test(text) || !Number.isSafeInteger(n) || (port ? n > 65_535 : n < 1)) throw new McpServeUsageError(`${flag} must be ${port ? 'a port number' : 'a positive integer'}, not ${JSON.stringify(text)}`)
  return n
}

/**
 * `ptc serve …`: resolves with the exit status when the server stops (stdio:
 * the client closed stdin; HTTP: `signal` or SIGINT/SIGTERM). 2 on bad usage.
 */
export async function serveCommand(argv: string[], io: ServeIo, options: { signal?: AbortSignal } = {}): Promise<number> {
  let args: ServeArgs
  try {
    args = parseServeArgs(argv)
  } catch (error) {
    io.stderr.write(`ptc serve: ${error instanceof Error ? error.message : String(error)}\n\n${SERVE_USAGE}\n`)
    return 2
  }
  const warn = (message: string): void => void io.stderr.write(`ptc serve: ${message}\n`)
  let runtime: CodeRuntime
  try {
    runtime = await createRuntime(args.sandbox)
  } catch (error) {
    warn(error instanceof Error ? error.message : String(error))
    return args.sandbox === 'isolated-vm' ? 2 : 1
  }
  const session = args.session === undefined ? undefined : await JsonlSession.open(args.session)
  const agent: Agent = session === undefined ? { id: 'ptc-serve' } : { id: 'ptc-serve', session }
  try {
    const ptc = await createPtcMcpServer({
      upstreams: args.upstreams,
      runtime,
      mode: args.mode,
      agent,
      onWarning: warn,
      upstreamStderr: io.stderr,
      ...(args.timeoutMs !== undefined && { limits: { wallMs: args.timeoutMs }, requestTimeoutMs: args.timeoutMs }),
    })
    try {
      if (args.http === undefined) await startStdio(ptc, io)
      else {
        const endpoint = await listenHttp(ptc, { port: args.http, host: args.host })
        warn(`listening on ${endpoint.url}`)
        await stopped(options.signal)
        await endpoint.close()
      }
    } finally {
      await ptc.close()
    }
    return 0
  } catch (error) {
    warn(error instanceof Error ? error.message : String(error))
    return 1
  } finally {
    await runtime.dispose()
    await session?.close()
  }
}

async function createRuntime(sandbox: ServeArgs['sandbox']): Promise<CodeRuntime> {
  if (sandbox === 'quickjs') return createQuickJSRuntime()
  // Optional backend: loaded only when asked for, and only if installed.
  const specifier = '@ptc/sandbox-isolated-vm'
  let backend: { isolatedVmAvailability(): { available: boolean; reason?: string }; createIsolatedVmRuntime(): CodeRuntime }
  try {
    backend = (await import(specifier)) as typeof backend
  } catch {
    throw new McpServeUsageError('--sandbox isolated-vm: @ptc/sandbox-isolated-vm is not installed')
  }
  const availability = backend.isolatedVmAvailability()
  if (!availability.available) throw new McpServeUsageError(`--sandbox isolated-vm is not available: ${availability.reason ?? 'unknown reason'}`)
  return backend.createIsolatedVmRuntime()
}

function stopped(signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      process.off('SIGINT', done)
      process.off('SIGTERM', done)
      resolve()
    }
    if (signal?.aborted === true) return done()
    signal?.addEventListener('abort', done, { once: true })
    process.once('SIGINT', done)
    process.once('SIGTERM', done)
  })
}
