/**
 * An upstream whose tool list changes while ptc serves it: ptc follows `notifications/tools/list_changed`,
 * re-registers the upstream's tools, and tells its own clients that its list changed.
 */
import type { CodeRuntime } from '@ptc/sandbox'
import { createQuickJSRuntime } from '@ptc/sandbox-quickjs'
import { afterAll, beforeAll, expect, test } from 'vitest'
import { createPtcMcpServer } from '@ptc/mcp'
import { connectInMemory, inMemoryFixture, type CallToolResult, type Tool } from '@ptc/mcp/testing'

let runtime: CodeRuntime
beforeAll(() => {
  runtime = createQuickJSRuntime({ poolSize: 1 })
})
afterAll(async () => {
  await runtime.dispose()
})

const tool = (name: string): Tool => ({ name, description: `The ${name} tool.`, inputSchema: { type: 'object' } })

test('a tool the upstream adds, or removes, after start is followed, and ptc clients are told the list changed', async () => {
  let extra = [tool('first')]
  let announce: () => Promise<void> = async () => undefined
  const transport = inMemoryFixture({
    extraTools: () => extra,
    onServer: (server) => (announce = () => server.sendToolListChanged()),
  })
  await using ptc = await createPtcMcpServer({
    upstreams: [{ name: 'up', transport }],
    runtime,
    onWarning: () => undefined,
  })
  const client = await connectInMemory(ptc)
  let clientNotified = 0
  client.fallbackNotificationHandler = async (notification) => {
    if (notification.method === 'notifications/tools/list_changed') clientNotified++
  }
  const described = async (): Promise<string> => (await client.listTools()).tools[0]?.description ?? ''
  expect(await described()).toContain('"up.first"')

  extra = [tool('first'), tool('second')]
  await announce()
  await expect.poll(() => ptc.tools.get('up.second') !== undefined).toBe(true)
  await expect.poll(() => clientNotified).toBeGreaterThan(0)
  expect(await described()).toContain('"up.second"')
  const result = (await client.callTool({
    name: 'run_code',
    arguments: { code: 'return await tools["up.second"]({})', description: 'new tool' },
  })) as CallToolResult
  expect(result.structuredContent).toEqual({ logs: [], result: 'called second' })

  extra = [tool('second')]
  await announce()
  await expect.poll(() => ptc.tools.get('up.first') === undefined).toBe(true)
  expect(await described()).not.toContain('"up.first"')
  expect(await described()).toContain('"up.echo"')
  await client.close()
})

test('changes announced in a flood are read a few times, spaced, and the last list is the one served', async () => {
  let extra = [tool('first')]
  let reads = 0
  let announce: () => Promise<void> = async () => undefined
  const transport = inMemoryFixture({
    extraTools: () => (reads++, extra),
    onServer: (server) => (announce = () => server.sendToolListChanged()),
  })
  await using ptc = await createPtcMcpServer({
    upstreams: [{ name: 'up', transport }],
    runtime,
    onWarning: () => undefined,
  })
  const before = reads
  for (let i = 0; i < 50; i++) {
    extra = [tool(`t${i}`)]
    await announce()
    await new Promise((resolve) => setImmediate(resolve))
  }
  await expect.poll(() => ptc.tools.get('up.t49') !== undefined, { timeout: 10_000 }).toBe(true)
  // One reading at the first announcement, then one for all that came during and after it (each was one reading).
  expect(reads - before).toBeLessThanOrEqual(4)
  expect([ptc.tools.get('up.first'), ptc.tools.get('up.t48')]).toEqual([undefined, undefined])
})
