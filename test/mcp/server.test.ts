/**
 * `createPtcMcpServer` in process: an in-memory fixture upstream, the SDK's
 * real client over an in-memory transport, QuickJS programs.
 */
import type { CodeRuntime } from '@ptc/sandbox'
import { createQuickJSRuntime } from '@ptc/sandbox-quickjs'
import { MemorySession, type Agent } from '@ptc/tools'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { createPtcMcpServer, UpstreamConnection, type PtcMcpServer } from '@ptc/mcp'
import {
  connectInMemory,
  inMemoryFixture,
  UNUSABLE_TOOL,
  type CallToolResult,
  type Client,
  type Tool,
} from '@ptc/mcp/testing'

let runtime: CodeRuntime
beforeAll(() => {
  runtime = createQuickJSRuntime({ poolSize: 2 })
})
afterAll(async () => {
  await runtime.dispose()
})

async function setup(
  mode: 'code' | 'both' = 'code',
): Promise<{ ptc: PtcMcpServer; client: Client; session: MemorySession; warnings: string[] }> {
  const session = new MemorySession()
  const agent: Agent = { id: 'mcp-test', session }
  const warnings: string[] = []
  const ptc = await createPtcMcpServer({
    upstreams: [{ name: 'fx', transport: inMemoryFixture({ extraTools: [UNUSABLE_TOOL] }) }],
    runtime,
    mode,
    agent,
    onWarning: (m) => warnings.push(m),
  })
  const client = await connectInMemory(ptc)
  return { ptc, client, session, warnings }
}

function text(result: CallToolResult): string {
  return result.content.map((b) => (b.type === 'text' ? b.text : `[${b.type}]`)).join('\n')
}

const runCode = (client: Client, code: string): Promise<CallToolResult> =>
  client.callTool({ name: 'run_code', arguments: { code, description: 'test' } }) as Promise<CallToolResult>

describe('ptc MCP server (in process)', () => {
  test('code mode lists only run_code, whose description carries the SDK declarations of the namespaced tools', async () => {
    const { ptc, client } = await setup()
    const { tools } = await client.listTools()
    expect(tools.map((t) => t.name)).toEqual(['run_code'])
    const description = tools[0]?.description ?? ''
    expect(description).toContain('"fx.echo"')
    expect(description).toContain('"fx.add"')
    expect(description).toMatch(/sum\??: number/)
    await client.close()
    await ptc.close()
  })

  test('both mode also lists the upstream tools under their namespaced names', async () => {
    const { ptc, client } = await setup('both')
    const names = (await client.listTools()).tools.map((t) => t.name).sort()
    expect(names).toEqual(['fx.add', 'fx.echo', 'fx.fails', 'fx.pixel', 'fx.sleep', 'run_code'])
    const pixel = (await client.callTool({ name: 'fx.pixel', arguments: {} })) as CallToolResult
    expect(pixel.content.map((b) => b.type)).toEqual(['text', 'image'])
    await client.close()
    await ptc.close()
  })

  test('a program gets text results as strings and structuredContent as typed values, in parallel', async () => {
    const { ptc, client, session } = await setup()
    const result = await runCode(
      client,
      `const [a, b, s] = await Promise.all([tools["fx.echo"]({ text: "hi" }), tools["fx.add"]({ a: 2, b: 3 }), tools["fx.sleep"]({ ms: 5 })])
       return { a, sum: b.sum, s }`,
    )
    expect(result.isError).toBeFalsy()
    expect(JSON.parse(text(result))).toEqual({ a: 'hi', sum: 5, s: 'slept 5' })
    const subCalls = session.events.filter((e) => e.type === 'tool/ptc-dispatch')
    expect(subCalls.map((e) => e['name']).sort()).toEqual(['fx.add', 'fx.echo', 'fx.sleep'])
    await client.close()
    await ptc.close()
  })

  test("a session log that fails to take a program's sub-call events: the client still gets the answer, the operator a warning", async () => {
    // A session that refuses the sub-calls' events (as a store with a row size limit might) and keeps the rest.
    const agent: Agent = {
      id: 'mcp-log-fails',
      session: {
        append(event) {
          if (event.type.startsWith('tool/ptc-dispatch')) throw new Error('row too large')
        },
      },
    }
    const warnings: string[] = []
    const ptc = await createPtcMcpServer({
      upstreams: [{ name: 'fx', transport: inMemoryFixture() }],
      runtime,
      agent,
      onWarning: (m) => warnings.push(m),
    })
    const client = await connectInMemory(ptc)
    try {
      const result = await runCode(client, 'const b = await tools["fx.add"]({ a: 2, b: 3 }); return b.sum')
      expect(result.isError).toBeFalsy()
      expect(text(result)).toBe('5')
      expect(
        warnings.some((w) =>
          /^the session log failed: .*row too large.*: call mcp-1 \(run_code\) was answered, and its events are missing from the session log$/.test(
            w,
          ),
        ),
      ).toBe(true)
    } finally {
      await client.close()
      await ptc.close()
    }
  })

  test('run_code declares its output schema and answers with structuredContent that the SDK client validates', async () => {
    const { ptc, client } = await setup()
    const [runCodeTool] = (await client.listTools()).tools
    expect(runCodeTool?.outputSchema).toMatchObject({
      type: 'object',
      properties: { logs: { type: 'array' } },
      required: ['logs'],
    })
    const result = await runCode(client, 'console.log("hi"); return { n: 1 }')
    expect(result.isError).toBeFalsy()
    expect(result.structuredContent).toEqual({ logs: ['hi'], result: { n: 1 } })
    const failed = await runCode(client, 'throw new Error("boom")')
    expect(failed.isError).toBe(true)
    expect(failed.structuredContent).toBeUndefined()
    await client.close()
    await ptc.close()
  })

  test('both mode declares the output schema of a tool whose output is an object, and only of those', async () => {
    const { ptc, client } = await setup('both')
    const listed = new Map((await client.listTools()).tools.map((t) => [t.name, t]))
    expect(listed.get('fx.add')?.outputSchema).toMatchObject({
      type: 'object',
      properties: { sum: { type: 'number' } },
      required: ['sum'],
    })
    expect(listed.get('fx.echo')?.outputSchema).toBeUndefined()
    const add = (await client.callTool({ name: 'fx.add', arguments: { a: 2, b: 3 } })) as CallToolResult
    expect(add.structuredContent).toEqual({ sum: 5 })
    const echo = (await client.callTool({ name: 'fx.echo', arguments: { text: 'x' } })) as CallToolResult
    expect(echo.structuredContent).toBeUndefined()
    expect(text(echo)).toBe('x')
    await client.close()
    await ptc.close()
  })

  test('a client that asks for progress gets one notification per sub-call as it settles, before the result', async () => {
    const { ptc, client } = await setup()
    const progress: { progress: number; message?: string }[] = []
    const result = (await client.callTool(
      {
        name: 'run_code',
        arguments: {
          code: 'await tools["fx.echo"]({ text: "a" }); try { await tools["fx.fails"]({}) } catch {} ; return await tools["fx.add"]({ a: 1, b: 1 })',
          description: 'three calls',
        },
      },
      undefined,
      {
        onprogress: (p) =>
          void progress.push({ progress: p.progress, ...(p.message !== undefined && { message: p.message }) }),
      },
    )) as CallToolResult
    expect(result.structuredContent).toEqual({ logs: [], result: { sum: 2 } })
    expect(progress.map((p) => p.progress)).toEqual([1, 2, 3])
    expect(progress.map((p) => p.message)).toEqual([
      expect.stringMatching(/^fx\.echo done \(mcp-\d+:ptc:1\)$/),
      expect.stringMatching(/^fx\.fails failed/),
      expect.stringMatching(/^fx\.add done/),
    ])
    // Without a progress token, nothing is sent.
    const quiet: unknown[] = []
    client.fallbackNotificationHandler = async (n) => void quiet.push(n)
    await runCode(client, 'return await tools["fx.echo"]({ text: "b" })')
    expect(quiet).toEqual([])
    await client.close()
    await ptc.close()
  })

  test('each client connection runs as its own agent under the configured one, sharing its session log', async () => {
    const { ptc, client, session } = await setup()
    const second = await connectInMemory(ptc)
    const seen: [string | undefined, string | undefined][] = []
    ptc.tools.on('tools/pre-execute', (exec, next) => (seen.push([exec.agent?.id, exec.agent?.parent?.id]), next()))
    await runCode(client, 'return await tools["fx.echo"]({ text: "one" })')
    await runCode(second, 'return await tools["fx.echo"]({ text: "two" })')
    const ids = [...new Set(seen.map(([id]) => id))]
    expect(ids).toHaveLength(2)
    expect(ids.every((id) => /^mcp-test:\d+$/.test(id ?? ''))).toBe(true)
    expect(seen.every(([, parent]) => parent === 'mcp-test')).toBe(true)
    expect(session.events.filter((e) => e.type === 'tool/ptc-dispatch')).toHaveLength(2)
    await second.close()
    await client.close()
    await ptc.close()
  })

  test('an upstream isError result is a ToolCallError in the program', async () => {
    const { ptc, client } = await setup()
    const result = await runCode(
      client,
      'try { await tools["fx.fails"]({ why: "because" }) } catch (e) { return `caught ${e instanceof ToolCallError}: ${e.message}` }',
    )
    expect(text(result)).toBe('caught true: it failed: because')
    await client.close()
    await ptc.close()
  })

  test('schema conversion warnings name the dropped keywords, and an unusable tool is skipped with a warning', async () => {
    const { ptc, client, warnings } = await setup()
    expect(warnings).toContainEqual(
      expect.stringMatching(/fx\.echo: input \/properties\/text\/minLength: dropped "minLength"/),
    )
    expect(warnings).toContainEqual(expect.stringMatching(/skipped tool fx\.scalar/))
    expect(ptc.tools.get('fx.scalar')).toBeUndefined()
    // The constraint is gone here, but the upstream still answers (it is the final validator).
    const result = await runCode(client, 'return await tools["fx.echo"]({ text: " leading space" })')
    expect(text(result)).toBe(' leading space')
    await client.close()
    await ptc.close()
  })

  test("an upstream's tools with schemas nested thousands deep are skipped with a warning; its other tools stay", async () => {
    // Each level is two of JSON nesting (`properties`, then the property).
    const nested = (levels: number): Record<string, unknown> => {
      let schema: Record<string, unknown> = { type: 'string' }
      for (let i = 0; i < levels; i++) schema = { type: 'object', properties: { a: schema } }
      return schema
    }
    for (const levels of [100, 3_000, 20_000]) {
      const warnings: string[] = []
      const ptc = await createPtcMcpServer({
        upstreams: [
          {
            name: 'fx',
            transport: inMemoryFixture({
              extraTools: [
                { name: 'deepIn', inputSchema: { type: 'object', properties: { x: nested(levels) } } },
                {
                  name: 'deepOut',
                  inputSchema: { type: 'object', properties: {} },
                  outputSchema: { type: 'object', properties: { x: nested(levels) } },
                },
              ],
            }),
          },
        ],
        runtime,
        onWarning: (m) => warnings.push(m),
      })
      expect(warnings).toContain('skipped tool fx.deepIn: its input schema nests more than 128 levels deep')
      expect(warnings).toContain('skipped tool fx.deepOut: its output schema nests more than 128 levels deep')
      expect([ptc.tools.get('fx.deepIn'), ptc.tools.get('fx.deepOut')]).toEqual([undefined, undefined])
      const client = await connectInMemory(ptc)
      expect(text(await runCode(client, 'return await tools["fx.echo"]({ text: "still here" })'))).toBe('still here')
      await client.close()
      await ptc.close()
    }
  })

  test("an upstream's output schemas are never compiled or run on the host: its regular expressions (a ReDoS) are not checked, its types are", async () => {
    // The SDK's client checked results with Ajv against the schema as the upstream gave it: `^(a+)+$` against 29 characters
    // held the host thread 18 s (each character doubles it), and compiling a 4.7 MB schema 25 s. ptc checks the converted schema.
    const warnings: string[] = []
    const ptc = await createPtcMcpServer({
      upstreams: [
        {
          name: 'h',
          transport: inMemoryFixture({
            extraTools: [
              {
                name: 'word',
                inputSchema: { type: 'object' },
                outputSchema: {
                  type: 'object',
                  properties: { v: { type: 'string', pattern: '^(a+)+$' } },
                  required: ['v'],
                },
              },
            ],
            answer: (name, args) =>
              name === 'word'
                ? {
                    content: [{ type: 'text', text: 'a word' }],
                    structuredContent: { v: args['n'] === undefined ? 5 : `${'a'.repeat(Number(args['n']))}!` },
                  }
                : undefined,
          }),
        },
      ],
      runtime,
      onWarning: (m) => warnings.push(m),
    })
    expect(warnings).toContain(
      'h.word: output /properties/v/pattern: dropped "pattern" (not expressible in the enforced subset; the upstream server still validates it)',
    )
    const client = await connectInMemory(ptc)
    expect(text(await runCode(client, 'return (await tools["h.word"]({ n: 24 })).v'))).toBe(`${'a'.repeat(24)}!`)
    // A value of the wrong type is still refused, by ptc's own check of the tool's output.
    const wrong = await runCode(
      client,
      'try { return await tools["h.word"]({}) } catch (e) { return `${e.code}: ${e.message}` }',
    )
    expect(text(wrong)).toMatch(/^INVALID_TOOL_OUTPUT: /)
    await client.close()
    await ptc.close()
  })

  test('an upstream is told of the cancellation of a call still in flight when its program ends, not of the calls already answered', async () => {
    const sent: string[] = []
    const fixture = inMemoryFixture()
    const transport = (): ReturnType<typeof fixture> => {
      const t = fixture()
      const send = t.send.bind(t)
      t.send = (message, options) => {
        if ('method' in message) sent.push(message.method)
        return send(message, options)
      }
      return t
    }
    const ptc = await createPtcMcpServer({
      upstreams: [{ name: 'fx', transport }],
      runtime,
      onWarning: () => undefined,
    })
    const client = await connectInMemory(ptc)
    // Twenty calls answered, then the program ends (its calls' signal is aborted): nothing to cancel.
    expect(
      text(
        await runCode(client, 'for (let i = 0; i < 20; i++) await tools["fx.echo"]({ text: "x" + i }); return "done"'),
      ),
    ).toBe('done')
    await new Promise((resolve) => setImmediate(resolve))
    expect(sent.filter((m) => m === 'tools/call')).toHaveLength(20)
    expect(sent.filter((m) => m === 'notifications/cancelled')).toEqual([])
    // A call in flight when its program times out is cancelled.
    const late = await client.callTool({
      name: 'run_code',
      arguments: { code: 'return await tools["fx.sleep"]({ ms: 30000 })', description: 'sleeps', timeoutMs: 300 },
    })
    expect(late.isError).toBe(true)
    for (let i = 0; i < 100 && !sent.includes('notifications/cancelled'); i++)
      await new Promise((resolve) => setTimeout(resolve, 10))
    expect(sent.filter((m) => m === 'notifications/cancelled')).toHaveLength(1)
    await client.close()
    await ptc.close()
  })

  test('a malformed tool in a list skips that tool, not the upstream; messages the client drops are told, ten per connection', async () => {
    const warnings: string[] = []
    let server: Parameters<NonNullable<NonNullable<Parameters<typeof inMemoryFixture>[0]>['onServer']>>[0] | undefined
    const ptc = await createPtcMcpServer({
      upstreams: [
        {
          name: 'h',
          transport: inMemoryFixture({
            // A null nextCursor (as some servers write "no more pages") ends the list.
            listPage: async () => ({
              tools: [{ name: 5 }, { nope: 1 }, { name: 'good', inputSchema: { type: 'object' } }] as unknown as Tool[],
              nextCursor: null as unknown as string,
            }),
            onServer: (s) => (server = s),
          }),
        },
      ],
      runtime,
      onWarning: (m) => warnings.push(m),
    })
    expect(warnings).toContainEqual(expect.stringMatching(/^skipped a tool of upstream h \(without a name\): name: /))
    expect(warnings.filter((w) => w.startsWith('skipped a tool of upstream h (without a name)'))).toHaveLength(2)
    const client = await connectInMemory(ptc)
    expect(text(await runCode(client, 'return await tools["h.good"]({})'))).toBe('called good')
    // Answers to no request (the SDK drops them: a call that waited for one would end at its timeout, naming nothing).
    for (let id = 1000; id < 1012; id++) await server?.transport?.send({ jsonrpc: '2.0', id, result: { n: id } })
    await new Promise((resolve) => setImmediate(resolve))
    const dropped = warnings.filter((w) =>
      w.startsWith(
        'upstream h sent what could not be used, and it was dropped: Received a response for an unknown message ID',
      ),
    )
    expect(dropped).toHaveLength(10)
    expect(dropped[9]).toMatch(/\(its further such messages on this connection are not reported\)$/)
    await client.close()
    await ptc.close()
  })

  test('a late answer to a call that was cancelled (aborted, timed out) is passed over without a warning; an answer to no request is still told', async () => {
    const warnings: string[] = []
    let server: Parameters<NonNullable<NonNullable<Parameters<typeof inMemoryFixture>[0]>['onServer']>>[0] | undefined
    const fixture = inMemoryFixture({ onServer: (s) => (server = s) })
    const calls: (string | number)[] = []
    // The ids of the calls the client sends, seen on their way.
    const transport = (): ReturnType<typeof fixture> => {
      const made = fixture()
      const send = made.send.bind(made)
      made.send = (message, options) => {
        if ('method' in message && message.method === 'tools/call' && 'id' in message) calls.push(message.id)
        return send(message, options)
      }
      return made
    }
    const connection = new UpstreamConnection(
      { name: 'h', transport },
      { onTools: () => undefined, onWarning: (m) => warnings.push(m) },
    )
    try {
      const aborted = new AbortController()
      const call = connection.call('sleep', { ms: 60_000 }, aborted.signal)
      await expect.poll(() => calls.length).toBe(1)
      aborted.abort(new Error('the run ended'))
      await expect(call).rejects.toThrow()
      // The upstream answers anyway (its cancellation crossed the answer), then answers a request never made.
      await server?.transport?.send({
        jsonrpc: '2.0',
        id: calls[0] as number,
        result: { content: [{ type: 'text', text: 'slept' }] },
      })
      await server?.transport?.send({ jsonrpc: '2.0', id: 987_654, result: { content: [] } })
      await new Promise((resolve) => setImmediate(resolve))
      expect(warnings).toEqual([
        expect.stringMatching(
          /^upstream h sent what could not be used, and it was dropped: Received a response for an unknown message ID: .*987654/,
        ),
      ])
    } finally {
      await connection.close()
    }
  })

  test("an upstream's tool list is bounded: tools, pages, a repeated cursor, one reading's time, long descriptions and schemas", async () => {
    const tool = (name: string): Tool => ({ name, inputSchema: { type: 'object' } })
    /** Starts a server on an upstream whose `tools/list` answers with `listPage` (each page after a turn of the event loop, as over a pipe). */
    const start = async (
      listPage: (cursor: string | undefined) => { tools: Tool[]; nextCursor?: string },
      options: { maxUpstreamTools?: number; requestTimeoutMs?: number } = {},
    ) => {
      const warnings: string[] = []
      const transport = inMemoryFixture({
        listPage: async (cursor) => (await new Promise((r) => setImmediate(r)), listPage(cursor)),
      })
      const ptc = await createPtcMcpServer({
        upstreams: [{ name: 'h', transport }],
        runtime,
        onWarning: (m) => warnings.push(m),
        ...options,
      })
      return { ptc, warnings }
    }
    // A list that never ends, 100 tools a page: served up to the cap (it grew the host without bound before).
    const endless = await start((cursor) => {
      const page = Number(cursor ?? 0)
      return { tools: Array.from({ length: 100 }, (_, i) => tool(`t${page}_${i}`)), nextCursor: String(page + 1) }
    })
    expect(endless.warnings).toContain(
      'upstream h lists more than 1000 tools: only its first 1000 are served (maxTools)',
    )
    expect([endless.ptc.tools.get('h.t9_99') !== undefined, endless.ptc.tools.get('h.t10_0')]).toEqual([
      true,
      undefined,
    ])
    const client = await connectInMemory(endless.ptc)
    expect(text(await runCode(client, 'return await tools["h.t3_7"]({})'))).toBe('called t3_7')
    await client.close()
    await endless.ptc.close()
    // Empty pages that never end: at most maxTools pages.
    const empty = await start((cursor) => ({ tools: [], nextCursor: `${cursor ?? ''}x` }), { maxUpstreamTools: 20 })
    expect(empty.warnings).toContain(
      "upstream h's tool list had not ended after 20 pages: only the 0 tools on them are served",
    )
    await empty.ptc.close()
    // A server keeps its last 1 000 warnings (each still goes to onWarning): a long-lived one's add up.
    const noisy = await start(
      () => ({
        tools: Array.from({ length: 1200 }, (_, i) => ({
          name: `t${i}`,
          inputSchema: { type: 'object', 'x-note': i },
        })),
      }),
      { maxUpstreamTools: 1500 },
    )
    expect(noisy.warnings.length).toBeGreaterThanOrEqual(1200)
    expect(noisy.ptc.warnings).toEqual(noisy.warnings.slice(-1000))
    await noisy.ptc.close()
    // A cursor given twice ends the reading; what came before it is served.
    const loop = await start((cursor) => ({ tools: [tool(`at_${cursor ?? 'start'}`)], nextCursor: 'again' }))
    expect(loop.warnings).toContain(
      'upstream h gave the same tool list cursor twice: only the 2 tools listed before it are served',
    )
    expect([loop.ptc.tools.get('h.at_start') !== undefined, loop.ptc.tools.get('h.at_again') !== undefined]).toEqual([
      true,
      true,
    ])
    await loop.ptc.close()
    // One page of 150 000 tools (its spread into the list overflowed the stack and failed the upstream).
    const huge = await start(() => ({ tools: Array.from({ length: 150_000 }, (_, i) => tool(`n${i}`)) }))
    expect(huge.warnings).toContain('upstream h lists more than 1000 tools: only its first 1000 are served (maxTools)')
    expect(huge.ptc.tools.get('h.n999')).toBeDefined()
    await huge.ptc.close()
    // Pages that never end, each in time: the whole reading has one request timeout.
    await expect(
      start((cursor) => ({ tools: [], nextCursor: `${cursor ?? ''}x` }), {
        maxUpstreamTools: 1e9,
        requestTimeoutMs: 1500,
      }),
    ).rejects.toThrow(/upstream h could not be connected: its tool list was not read within 1500 ms \(\d+ pages\)/)
    // A description cut to its first 16 Ki characters; a schema longer than 64 Ki characters of JSON skips its tool.
    const properties = Object.fromEntries(Array.from({ length: 10_000 }, (_, i) => [`p${i}`, { type: 'string' }]))
    for (const bad of [0, 1.5, Number.NaN]) {
      await expect(start(() => ({ tools: [] }), { maxUpstreamTools: bad })).rejects.toThrow(
        `maxUpstreamTools must be a positive integer, not ${String(bad)}`,
      )
    }
    const big = await start(() => ({
      tools: [
        { ...tool('wordy'), description: 'w'.repeat(1_000_000) },
        { name: 'wide', inputSchema: { type: 'object', properties } },
        tool('plain'),
      ],
    }))
    expect(big.warnings).toContain('h.wordy: its description (1000000 characters) is cut to its first 16384')
    expect(big.ptc.tools.get('h.wordy')?.description).toBe(`${'w'.repeat(16_384)}…`)
    expect(big.warnings).toContainEqual(
      expect.stringMatching(/^skipped tool h\.wide: its input schema is \d+ characters of JSON, more than 65536$/),
    )
    expect([big.ptc.tools.get('h.wide'), big.ptc.tools.get('h.plain') !== undefined]).toEqual([undefined, true])
    await big.ptc.close()
    // Pages that never end, each with a 3 MB tool: the reading keeps at most 32 Mi characters of tools (it kept
    // every page, and a hostile upstream ran the host out of memory).
    const heavy = await start((cursor) => ({
      tools: [{ ...tool(`t${cursor ?? 0}`), description: 'd'.repeat(3_000_000) }],
      nextCursor: String(Number(cursor ?? 0) + 1),
    }))
    expect(heavy.warnings).toContainEqual(
      expect.stringMatching(
        /^upstream h's tool list is longer than 33554432 characters: only the 11 tools before it are served$/,
      ),
    )
    expect([heavy.ptc.tools.get('h.t10') !== undefined, heavy.ptc.tools.get('h.t11')]).toEqual([true, undefined])
    await heavy.ptc.close()
    // A name longer than the MCP specification's 128 characters skips its tool; a name listed twice serves its first.
    const names = await start(() => ({
      tools: [
        tool('n'.repeat(129)),
        { ...tool('twice'), description: 'first' },
        { ...tool('twice'), description: 'second' },
        tool('n'.repeat(128)),
      ],
    }))
    expect(names.warnings).toContain(
      `skipped a tool of upstream h: its name is 129 characters long, more than 128 (${JSON.stringify('n'.repeat(40))}…)`,
    )
    expect(names.warnings).toContain('upstream h lists a tool named "twice" more than once: only the first is served')
    expect([
      names.ptc.tools.get('h.twice')?.description,
      names.ptc.tools.get(`h.${'n'.repeat(128)}`) !== undefined,
    ]).toEqual(['first', true])
    await names.ptc.close()
    // An empty name, or one with a control character, skips its tool (a name with a space is printable: served).
    const odd = await start(() => ({
      tools: [
        '',
        'nul\u0000x',
        'line\nend',
        'c1\u0085',
        'lone\ud800',
        'rtl\u202eexe.txt',
        '\u200b',
        ' \u00a0\u3000',
        '\ufeff',
        'with space',
        'café',
      ].map(tool),
    }))
    const skipped = odd.warnings.filter((w) => w.startsWith('skipped a tool of upstream h: its name'))
    expect(skipped).toEqual([
      'skipped a tool of upstream h: its name "" is empty',
      'skipped a tool of upstream h: its name "nul\\u0000x" is not printable (it holds a control character)',
      'skipped a tool of upstream h: its name "line\\nend" is not printable (it holds a control character)',
      'skipped a tool of upstream h: its name "c1\u0085" is not printable (it holds a control character)',
      'skipped a tool of upstream h: its name "lone\\ud800" is not well-formed Unicode (it holds a lone surrogate)',
      'skipped a tool of upstream h: its name "rtl\u202eexe.txt" holds a bidirectional control character (it would show reversed)',
      'skipped a tool of upstream h: its name "\u200b" has no visible character',
      'skipped a tool of upstream h: its name " \u00a0\u3000" has no visible character',
      'skipped a tool of upstream h: its name "\ufeff" has no visible character',
    ])
    expect(['h.', 'h.\u200b', 'h.with space', 'h.café'].map((name) => odd.ptc.tools.get(name) !== undefined)).toEqual([
      false,
      false,
      true,
      true,
    ])
    await odd.ptc.close()
  })

  test('arguments nested too deeply to serialize are a tool error, as any refused arguments, not a protocol error; the server goes on', async () => {
    const { ptc, client } = await setup()
    let deep: unknown = []
    for (let i = 0; i < 20_000; i++) deep = [deep]
    const result = (await client.callTool({
      name: 'run_code',
      arguments: { code: 'return 1', description: 'deep', x: deep },
    })) as CallToolResult
    expect(result).toEqual({
      content: [{ type: 'text', text: 'Error: invalid run_code arguments: they are nested too deeply to be read' }],
      isError: true,
    })
    expect(text(await runCode(client, 'return 2'))).toContain('2')
    await client.close()
    await ptc.close()
  })

  test('a model-direct call of an upstream tool in code mode is UNKNOWN_TOOL with a hint', async () => {
    const { ptc, client } = await setup()
    const result = (await client.callTool({ name: 'fx.echo', arguments: { text: 'x' } })) as CallToolResult
    expect(result.isError).toBe(true)
    expect(text(result)).toMatch(/run_code/)
    await client.close()
    await ptc.close()
  })
})
