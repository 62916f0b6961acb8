import { PassThrough } from 'node:stream'
import { createQuickJSRuntime } from '@ptc/sandbox-quickjs'
import { describe, expect, test } from 'vitest'
import { createPtcMcpServer, listenHttp, parseServeArgs, parseUpstreamCommand, serveCommand, splitWords } from '@ptc/mcp'
import { connectHttpClient, inMemoryFixture, type CallToolResult } from '@ptc/mcp/testing'

describe('ptc serve arguments', () => {
  test('upstream command lines split like a shell (quotes, escapes) with an optional name= prefix', () => {
    expect(splitWords(`node "a b.js" 'c d' e\\ f ""`)).toEqual(['node', 'a b.js', 'c d', 'e f', ''])
    expect(parseUpstreamCommand('fs=npx -y @modelcontextprotocol/server-filesystem /tmp')).toEqual({ name: 'fs', command: 'npx', args: ['-y', '@modelcontextprotocol/server-filesystem', '/tmp'] })
    expect(parseUpstreamCommand('gh=/usr/bin/gh-mcp --ro')).toEqual({ name: 'gh', command: '/usr/bin/gh-mcp', args: ['--ro'] })
    expect(parseUpstreamCommand('./dir=x/server')).toEqual({ command: './dir=x/server', args: [] })
    expect(() => splitWords('node "open')).toThrow(/unterminated/)
  })

  test('options are parsed strictly; bad usage exits with status 2 and a message', async () => {
    expect(parseServeArgs(['--upstream', 'x', '--mode', 'both', '--http', '0', '--timeout', '500'])).toMatchObject({ mode: 'both', http: 0, timeoutMs: 500, host: '127.0.0.1' })
    const stderr = new PassThrough()
    let text = ''
    stderr.on('data', (c: Buffer) => (text += c.toString()))
    expect(await serveCommand(['--upstream', 'x', '--bogus'], { stdin: new PassThrough(), stdout: new PassThrough(), stderr })).toBe(2)
    expect(text).toMatch(/bogus[\s\S]*Usage: ptc serve/)
    expect(await serveCommand([], { stdin: new PassThrough(), stdout: new PassThrough(), stderr })).toBe(2)
    expect(await serveCommand(['--upstream', 'x', '--mode', 'nope'], { stdin: new PassThrough(), stdout: new PassThrough(), stderr })).toBe(2)
  })
})

describe('Streamable HTTP', () => {
  test('serves run_code on 127.0.0.1 to the SDK client', async () => {
    await using runtime = createQuickJSRuntime({ poolSize: 1 })
    await using ptc = await createPtcMcpServer({ upstreams: [{ name: 'fx', transport: inMemoryFixture() }], runtime, onWarning: () => undefined })
    await using endpoint = await listenHttp(ptc, { port: 0 })
    expect(endpoint.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/mcp$/)
    const client = await connectHttpClient(endpoint.url)
    const result = (await client.callTool({ name: 'run_code', arguments: { code: 'return await tools["fx.echo"]({ text: "over http" })', description: 'http' } })) as CallToolResult
    expect(result.content).toEqual([{ type: 'text', text: 'over http' }])
    await client.close()
  })
})
