import { dirname, join, resolve } from 'node:path'
import { PassThrough } from 'node:stream'
import { fileURLToPath } from 'node:url'
import { DEFAULT_LIMITS } from '@ptc/sandbox'
import { createQuickJSRuntime } from '@ptc/sandbox-quickjs'
import { describe, expect, test } from 'vitest'
import {
  createPtcMcpServer,
  listenHttp,
  McpServeUsageError,
  parseServeArgs,
  parseUpstreamCommand,
  serveCommand,
  splitWords,
} from '@ptc/mcp'
import { connectHttpClient, inMemoryFixture, type CallToolResult } from '@ptc/mcp/testing'

describe('ptc serve arguments', () => {
  test('upstream command lines split like a shell (quotes, escapes) with an optional name= prefix', () => {
    expect(splitWords(`node "a b.js" 'c d' e\\ f ""`)).toEqual(['node', 'a b.js', 'c d', 'e f', ''])
    expect(parseUpstreamCommand('fs=npx -y @modelcontextprotocol/server-filesystem /tmp')).toEqual({
      name: 'fs',
      command: 'npx',
      args: ['-y', '@modelcontextprotocol/server-filesystem', '/tmp'],
    })
    expect(parseUpstreamCommand('gh=/usr/bin/gh-mcp --ro')).toEqual({
      name: 'gh',
      command: '/usr/bin/gh-mcp',
      args: ['--ro'],
    })
    expect(parseUpstreamCommand('./dir=x/server')).toEqual({ command: './dir=x/server', args: [] })
    expect(() => splitWords('node "open')).toThrow(/unterminated/)
  })

  test('options are parsed strictly; bad usage exits with status 2 and a message', async () => {
    expect(parseServeArgs(['--upstream', 'x', '--mode', 'both', '--http', '0', '--timeout', '500'])).toMatchObject({
      mode: 'both',
      http: 0,
      timeoutMs: 500,
      host: '127.0.0.1',
    })
    const stderr = new PassThrough()
    let text = ''
    stderr.on('data', (c: Buffer) => (text += c.toString()))
    expect(
      await serveCommand(['--upstream', 'x', '--bogus'], {
        stdin: new PassThrough(),
        stdout: new PassThrough(),
        stderr,
      }),
    ).toBe(2)
    expect(text).toBe("ptc serve: Unknown option '--bogus'; see `ptc serve --help`\n")
    expect(await serveCommand([], { stdin: new PassThrough(), stdout: new PassThrough(), stderr })).toBe(2)
    expect(
      await serveCommand(['--upstream', 'x', '--mode', 'nope'], {
        stdin: new PassThrough(),
        stdout: new PassThrough(),
        stderr,
      }),
    ).toBe(2)
  })

  test('a usage error is one line with a hint to --help, not the whole usage; an unknown option names the closest', async () => {
    const { io, stderr } = captured()
    expect(await serveCommand(['--upstream', 'x', '--alow-missing'], io)).toBe(2)
    expect(stderr()).toBe(
      "ptc serve: Unknown option '--alow-missing' (did you mean --allow-missing?); see `ptc serve --help`\n",
    )
    expect(() => parseServeArgs(['--upstream', 'x', '--max-ouput', '5'])).toThrow(
      "Unknown option '--max-ouput' (did you mean --max-output?)",
    )
    expect(() => parseServeArgs(['--upstream', 'x', '--frobnicate'])).toThrow(/^Unknown option '--frobnicate'$/)
  })

  test('discovery flags: a budget, tools always loaded, or off; bad values name the flag; shown in --help', async () => {
    expect(parseServeArgs(['--upstream', 'x']).discovery).toEqual({ off: false })
    expect(
      parseServeArgs([
        '--upstream',
        'x',
        '--discovery-budget',
        '2000',
        '--always-load',
        'fs.read',
        '--always-load',
        'fs.list',
      ]).discovery,
    ).toEqual({
      off: false,
      budgetChars: 2000,
      alwaysLoaded: ['fs.read', 'fs.list'],
    })
    expect(parseServeArgs(['--upstream', 'x', '--no-discovery']).discovery).toEqual({ off: true })
    expect(() => parseServeArgs(['--upstream', 'x', '--discovery-budget', '0'])).toThrow(
      '--discovery-budget must be a positive integer, not "0"',
    )
    expect(() => parseServeArgs(['--upstream', 'x', '--discovery-budget', 'big'])).toThrow(
      '--discovery-budget must be a positive integer, not "big"',
    )
    expect(() => parseServeArgs(['--upstream', 'x', '--always-load', ' '])).toThrow(
      '--always-load needs a tool name, not " "',
    )
    expect(() => parseServeArgs(['--upstream', 'x', '--no-discovery', '--always-load', 'a'])).toThrow(
      '--no-discovery turns discovery off; --always-load goes with it on',
    )
    const { io, stderr, stdout } = captured()
    expect(await serveCommand(['--upstream', 'x', '--discovery-budget', '-3'], io)).toBe(2)
    expect(stderr()).toMatch(/^ptc serve: .*--discovery-budget.*; see `ptc serve --help`\n$/)
    expect(await serveCommand(['--help'], io)).toBe(0)
    for (const flag of ['--discovery-budget CHARS', '--always-load NAME', '--no-discovery'])
      expect(stdout()).toContain(flag)
  })

  test('limit flags become the limits of every run; --timeout is CPU and wall at once, as in ptc run', () => {
    expect(parseServeArgs(['--upstream', 'x']).limits).toEqual({})
    const flags = [
      '--timeout',
      '500',
      '--cpu',
      '100',
      '--memory',
      '64',
      '--max-output',
      '2048',
      '--max-sub-calls',
      '3',
      '--max-result-chars',
      '1000',
      '--max-argument-chars',
      '2000',
    ]
    expect(parseServeArgs(['--upstream', 'x', ...flags]).limits).toEqual({
      wallMs: 500,
      cpuMs: 100,
      memoryBytes: 64 * 1024 * 1024,
      maxOutputBytes: 2048,
      maxSubCalls: 3,
      maxResultChars: 1000,
      maxArgumentChars: 2000,
    })
    // As in ptc run: --timeout is the program's CPU and wall at once (and times the upstream requests); --cpu and --wall win over it.
    expect(parseServeArgs(['--upstream', 'x', '--timeout', '500'])).toMatchObject({
      timeoutMs: 500,
      limits: { wallMs: 500, cpuMs: 500 },
    })
    expect(parseServeArgs(['--upstream', 'x', '--wall', '700']).limits).toEqual({ wallMs: 700 })
    expect(parseServeArgs(['--upstream', 'x', '--timeout', '500', '--wall', '700'])).toMatchObject({
      timeoutMs: 500,
      limits: { wallMs: 700, cpuMs: 500 },
    })
    expect(parseServeArgs(['--upstream', 'x', '--wall', '700']).timeoutMs).toBeUndefined()
    expect(() => parseServeArgs(['--upstream', 'x', '--wall', '0'])).toThrow(/--wall must be a positive integer/)
    expect(() => parseServeArgs(['--upstream', 'x', '--max-output', '0'])).toThrow(
      /--max-output must be a positive integer/,
    )
    expect(() => parseServeArgs(['--upstream', 'x', '--cpu', String(2 ** 31)])).toThrow(
      /--cpu must be at most 2147483647/,
    )
    expect(parseServeArgs(['--upstream', 'x', '--max-upstream-tools', '50'])).toMatchObject({
      maxUpstreamTools: 50,
      limits: {},
    })
    expect(() => parseServeArgs(['--upstream', 'x', '--max-upstream-tools', '0'])).toThrow(
      /--max-upstream-tools must be a positive integer/,
    )
  })

  test('--help shows the default limits it was given, else the sandbox’s', async () => {
    const standalone = captured()
    expect(await serveCommand(['--help'], standalone.io)).toBe(0)
    expect(standalone.stdout()).toContain(`(default ${DEFAULT_LIMITS.wallMs} ms)`)
    expect(standalone.stdout()).toContain(`(default ${DEFAULT_LIMITS.maxOutputBytes})`)
    const given = captured()
    expect(await serveCommand(['--help'], given.io, { limits: { wallMs: 45_000, maxOutputBytes: 32_768 } })).toBe(0)
    expect(given.stdout()).toContain('(default 45000 ms)')
    expect(given.stdout()).toContain('(default 32768)')
    expect(given.stdout()).toContain(`(default ${DEFAULT_LIMITS.cpuMs} ms)`)
  })

  test('--upstream may be left out when the host serves local tools; the host’s sandbox is the default and --sandbox wins', () => {
    expect(() => parseServeArgs([], {})).toThrow(/give at least one --upstream/)
    expect(parseServeArgs([], {}, { localTools: true })).toMatchObject({ upstreams: [], sandbox: 'quickjs' })
    expect(parseServeArgs([], {}, { localTools: true, sandbox: 'isolated-vm' }).sandbox).toBe('isolated-vm')
    expect(parseServeArgs(['--sandbox', 'quickjs'], {}, { localTools: true, sandbox: 'isolated-vm' }).sandbox).toBe(
      'quickjs',
    )
  })
})

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..')
const fixtureUpstream = `fx=node --conditions=@ptc/source --import tsx ${join(root, 'packages/mcp/src/testing/fixture-server.ts')}`

/** `serveCommand` with captured output; `text()` is everything written to stderr so far. */
function captured(): {
  io: { stdin: PassThrough; stdout: PassThrough; stderr: PassThrough }
  stderr: () => string
  stdout: () => string
} {
  const io = { stdin: new PassThrough(), stdout: new PassThrough(), stderr: new PassThrough() }
  let err = ''
  let out = ''
  io.stderr.on('data', (c: Buffer) => (err += c.toString()))
  io.stdout.on('data', (c: Buffer) => (out += c.toString()))
  return { io, stderr: () => err, stdout: () => out }
}

describe('ptc serve --http arguments', () => {
  const http = ['--upstream', 'x', '--http', '0']
  const usage = (argv: string[], env: Record<string, string> = {}): string => {
    try {
      parseServeArgs(argv, env)
    } catch (error) {
      if (error instanceof McpServeUsageError) return error.message
      throw error
    }
    return 'accepted'
  }

  test('--no-auth is a usage error on a non-loopback bind, and together with --token', () => {
    expect(usage([...http, '--no-auth', '--host', '0.0.0.0'])).toMatch(
      /--no-auth is allowed only with a loopback --host/,
    )
    expect(usage([...http, '--no-auth', '--host', '192.168.1.20'])).toMatch(/non-loopback bind always needs a token/)
    expect(usage([...http, '--no-auth', '--token', 'abcdefghijklmnopqrst'])).toMatch(/exclude each other/)
    for (const host of ['127.0.0.1', '::1', 'localhost'])
      expect(parseServeArgs([...http, '--no-auth', '--host', host], {})).toMatchObject({ noAuth: true, host })
  })

  test('a non-loopback bind always has a token: given, from PTC_SERVE_TOKEN, or generated at start', () => {
    expect(parseServeArgs([...http, '--host', '0.0.0.0'], {})).not.toHaveProperty('token')
    expect(parseServeArgs([...http, '--host', '0.0.0.0'], { PTC_SERVE_TOKEN: 'from-the-environment-1' })).toMatchObject(
      { token: 'from-the-environment-1', tokenSource: 'PTC_SERVE_TOKEN' },
    )
    expect(
      parseServeArgs([...http, '--token', 'from-the-command-line'], { PTC_SERVE_TOKEN: 'from-the-environment-1' }),
    ).toMatchObject({ token: 'from-the-command-line', tokenSource: '--token' })
    expect(usage([...http, '--token', 'short'])).toMatch(/--token: the token must be at least 16/)
    expect(usage([...http], { PTC_SERVE_TOKEN: 'has a space in it, long' })).toMatch(/PTC_SERVE_TOKEN: the token/)
  })

  test('origins, hosts and limits are checked; HTTP options without --http are usage errors', () => {
    expect(
      parseServeArgs(
        [
          ...http,
          '--allow-origin',
          'https://app.example',
          '--allow-host',
          'mcp.example',
          '--allow-host',
          'mcp.example:8443',
          '--max-body-bytes',
          '2048',
          '--session-idle-ms',
          '200',
          '--max-sessions',
          '3',
        ],
        {},
      ),
    ).toMatchObject({
      allowOrigins: ['https://app.example'],
      allowHosts: ['mcp.example', 'mcp.example:8443'],
      maxBodyBytes: 2048,
      sessionIdleMs: 200,
      maxSessions: 3,
    })
    expect(usage([...http, '--allow-origin', 'app.example'])).toMatch(
      /--allow-origin "app.example": not an http\(s\) origin/,
    )
    expect(usage([...http, '--allow-origin', 'https://app.example/path'])).toMatch(/not an http\(s\) origin/)
    expect(usage([...http, '--allow-host', 'http://mcp.example'])).toMatch(/--allow-host .*not a host name/)
    expect(usage([...http, '--max-sessions', '0'])).toMatch(/--max-sessions must be a positive integer/)
    const connections = ['--max-connections', '64', '--headers-timeout-ms', '5000', '--request-read-timeout-ms', '9000']
    expect(parseServeArgs([...http, ...connections], {})).toMatchObject({
      maxConnections: 64,
      headersTimeoutMs: 5000,
      requestReadTimeoutMs: 9000,
    })
    expect(usage([...http, '--max-connections', '1.5'])).toMatch(/--max-connections must be a positive integer/)
    expect(usage([...http, '--headers-timeout-ms', '2147483648'])).toBe(
      '--headers-timeout-ms must be at most 2147483647, not 2147483648',
    )
    expect(usage([...http, '--headers-timeout-ms', '9000', '--request-read-timeout-ms', '5000'])).toMatch(
      /headersTimeoutMs \(9000\) must not exceed requestReadTimeoutMs \(5000\)/,
    )
    expect(usage(['--upstream', 'x', '--max-connections', '4'])).toBe('--max-connections needs --http')
    expect(usage(['--upstream', 'x', '--token', 'abcdefghijklmnopqrst'])).toBe('--token needs --http')
    expect(usage(['--upstream', 'x', '--no-auth'])).toBe('--no-auth needs --http')
  })

  test('--help prints the usage on stdout with the HTTP options and exits 0', async () => {
    const { io, stdout } = captured()
    expect(await serveCommand(['--help'], io)).toBe(0)
    for (const flag of [
      '--token',
      '--no-auth',
      '--allow-origin',
      '--allow-host',
      '--max-body-bytes',
      '--session-idle-ms',
      '--max-sessions',
      '--max-connections',
      '--headers-timeout-ms',
      '--request-read-timeout-ms',
      'PTC_SERVE_TOKEN',
    ]) {
      expect(stdout()).toContain(flag)
    }
  })

  test('a non-loopback --no-auth exits with status 2 before serving', async () => {
    const { io, stderr } = captured()
    expect(await serveCommand([...http, '--host', '0.0.0.0', '--no-auth'], io, { env: {} })).toBe(2)
    expect(stderr()).toMatch(
      /^ptc serve: --no-auth is allowed only with a loopback --host[^\n]*; see `ptc serve --help`\n$/,
    )
  })

  test('ptc serve --http prints the URL and a generated token on stderr; the SDK client with that token is served', async () => {
    const { io, stderr } = captured()
    const stop = new AbortController()
    const exit = serveCommand(['--upstream', fixtureUpstream, '--http', '0'], io, { signal: stop.signal, env: {} })
    const end = Date.now() + 30_000
    while (!/bearer token/.test(stderr()) && Date.now() < end) await new Promise((r) => setTimeout(r, 50))
    const url = /listening on (http:\/\/127\.0\.0\.1:\d+\/mcp)/.exec(stderr())?.[1] ?? ''
    const token = /bearer token \(generated[^)]*\): ([A-Za-z0-9_-]{43})\n/.exec(stderr())?.[1] ?? ''
    expect(url).not.toBe('')
    expect(token).not.toBe('')
    const refused = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' })
    expect(refused.status).toBe(401)
    const client = await connectHttpClient(url, { token })
    const result = (await client.callTool({
      name: 'run_code',
      arguments: { code: 'return await tools["fx.echo"]({ text: "served" })', description: 'cli' },
    })) as CallToolResult
    expect(result.content).toEqual([{ type: 'text', text: 'served' }])
    await client.close()
    stop.abort()
    expect(await exit).toBe(0)
  }, 60_000)

  test("ptc serve gives the server the discovery asked for: --no-discovery wins over the host's (a config's)", async () => {
    const { io, stderr } = captured()
    const stop = new AbortController()
    const exit = serveCommand(['--upstream', fixtureUpstream, '--http', '0', '--no-auth', '--no-discovery'], io, {
      signal: stop.signal,
      env: {},
      discovery: { budgetChars: 1 },
    })
    const end = Date.now() + 30_000
    while (!/ready \(/.test(stderr()) && Date.now() < end) await new Promise((r) => setTimeout(r, 50))
    const url = /listening on (http:\/\/127\.0\.0\.1:\d+\/mcp)/.exec(stderr())?.[1] ?? ''
    expect(url).not.toBe('')
    const client = await connectHttpClient(url, {})
    const code =
      'try { await tools.search_tools({ query: "echo a text" }) } catch (e) { return e.code } return "searched"'
    const result = (await client.callTool({
      name: 'run_code',
      arguments: { code, description: 'search' },
    })) as CallToolResult
    // Off: no search_tools (on, as the host asked, it would have searched).
    expect(result.content).toEqual([{ type: 'text', text: 'UNKNOWN_TOOL' }])
    await client.close()
    stop.abort()
    expect(await exit).toBe(0)
  }, 60_000)
})

describe('Streamable HTTP', () => {
  test('serves run_code on 127.0.0.1 to the SDK client', async () => {
    await using runtime = createQuickJSRuntime({ poolSize: 1 })
    await using ptc = await createPtcMcpServer({
      upstreams: [{ name: 'fx', transport: inMemoryFixture() }],
      runtime,
      onWarning: () => undefined,
    })
    await using endpoint = await listenHttp(ptc, { port: 0 })
    expect(endpoint.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/mcp$/)
    const client = await connectHttpClient(endpoint.url, { token: endpoint.token })
    const result = (await client.callTool({
      name: 'run_code',
      arguments: { code: 'return await tools["fx.echo"]({ text: "over http" })', description: 'http' },
    })) as CallToolResult
    expect(result.content).toEqual([{ type: 'text', text: 'over http' }])
    await client.close()
  })
})
