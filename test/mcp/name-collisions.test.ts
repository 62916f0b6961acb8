/**
 * Tool names that would collide in `ptc serve`: two upstreams with one name, an upstream tool with the name
 * of a tool the host serves, or a dotted upstream name that meets another upstream's namespace. At start
 * they are refused with both tools named; a collision that only appears later (a changed tool list) skips
 * the newcomer with a warning, and the tool that was there keeps serving.
 */
import type { CodeRuntime } from '@ptc/sandbox'
import { createQuickJSRuntime } from '@ptc/sandbox-quickjs'
import { defineTool, ToolsService } from '@ptc/tools'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { createPtcMcpServer, McpServeUsageError } from '@ptc/mcp'
import { connectInMemory, inMemoryFixture, type CallToolResult, type Tool } from '@ptc/mcp/testing'

let runtime: CodeRuntime
beforeAll(() => {
  runtime = createQuickJSRuntime({ poolSize: 1 })
})
afterAll(async () => {
  await runtime.dispose()
})

/** What the promise rejects with; fails the test when it resolves. */
async function rejection(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => expect.unreachable('it started'),
    (error: unknown) => error,
  )
}

const tool = (name: string): Tool => ({ name, description: `The ${name} tool.`, inputSchema: { type: 'object' } })

/** A host tool named `name` that answers `host`. */
function hostTools(name: string): ToolsService {
  const tools = new ToolsService()
  tools.register(
    defineTool({
      name,
      description: 'The host tool.',
      parameters: {},
      output: { schema: { type: 'string' } },
      execute: async () => 'host',
    }),
  )
  return tools
}

describe('tool name collisions in ptc serve', () => {
  test('two upstreams with one name are refused before anything starts', async () => {
    let started = 0
    const transport = inMemoryFixture({ onServer: () => void started++ })
    const error = await rejection(
      createPtcMcpServer({
        upstreams: [
          { name: 'fx', transport },
          { name: 'fx', transport },
        ],
        runtime,
      }),
    )
    expect(error).toBeInstanceOf(McpServeUsageError)
    expect((error as Error).message).toBe(
      'two upstreams are named "fx": their tools would share the names fx.*; give each its own name',
    )
    expect(started).toBe(0)
  })

  test("an upstream tool with the name of the host's tool is refused at start, naming both; nothing is left registered", async () => {
    const tools = hostTools('fx.echo')
    const error = await rejection(
      createPtcMcpServer({
        upstreams: [{ name: 'fx', transport: inMemoryFixture() }],
        runtime,
        tools,
        onWarning: () => undefined,
      }),
    )
    expect(error).toBeInstanceOf(McpServeUsageError)
    expect((error as Error).message).toMatch(
      /^tool names collide: tool "echo" of upstream fx would be "fx\.echo", the name of a tool the host serves: give one of the upstreams another name .* or rename the host's tool$/,
    )
    expect(tools.definitions().map((d) => d.name)).toEqual(['fx.echo'])
  })

  test('a dotted upstream tool name that meets another upstream’s tool is refused at start, naming both upstreams', async () => {
    const error = await rejection(
      createPtcMcpServer({
        upstreams: [
          { name: 'a', transport: inMemoryFixture({ extraTools: [tool('b.c')] }) },
          { name: 'a.b', transport: inMemoryFixture({ extraTools: [tool('c')] }) },
        ],
        runtime,
        onWarning: () => undefined,
      }),
    )
    expect((error as Error).message).toMatch(
      /tool "(b\.c|c)" of upstream (a|a\.b) would be "a\.b\.c", the name of the tool of upstream (a\.b|a):/,
    )
  })

  test('a collision that appears after start skips the newcomer with a warning; the host tool keeps serving', async () => {
    let extra: Tool[] = []
    let announce: () => Promise<void> = async () => undefined
    const warnings: string[] = []
    const tools = hostTools('up.mine')
    const transport = inMemoryFixture({
      extraTools: () => extra,
      onServer: (server) => (announce = () => server.sendToolListChanged()),
    })
    await using ptc = await createPtcMcpServer({
      upstreams: [{ name: 'up', transport }],
      runtime,
      tools,
      onWarning: (w) => warnings.push(w),
    })
    extra = [tool('mine'), tool('other')]
    await announce()
    await expect.poll(() => ptc.tools.get('up.other') !== undefined).toBe(true)
    expect(warnings).toContainEqual(
      expect.stringMatching(
        /^skipped tool "mine" of upstream up would be "up\.mine", the name of a tool the host serves/,
      ),
    )
    const client = await connectInMemory(ptc)
    const result = (await client.callTool({
      name: 'run_code',
      arguments: { code: 'return await tools["up.mine"]({})', description: 'host tool' },
    })) as CallToolResult
    expect(result.structuredContent).toEqual({ logs: [], result: 'host' })
    await client.close()
  })
})
