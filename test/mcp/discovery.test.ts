/**
 * `ptc serve` in front of upstreams with hundreds of tools: `run_code`'s description stays within the discovery
 * budget, clients get `search_tools`, and an upstream's `list_changed` updates the search index.
 */
import type { CodeRuntime } from '@ptc/sandbox'
import { createQuickJSRuntime } from '@ptc/sandbox-quickjs'
import { RUN_CODE_DESCRIPTION } from '@ptc/ptc'
import { afterAll, beforeAll, expect, test } from 'vitest'
import { createPtcMcpServer } from '@ptc/mcp'
import { connectInMemory, inMemoryFixture, type CallToolResult, type Tool } from '@ptc/mcp/testing'
import { githubCatalog } from '../fixtures/catalogs/github.js'
import { MCP_SERVERS, mcpServerTools } from '../fixtures/catalogs/mcp-servers.js'

let runtime: CodeRuntime
beforeAll(() => {
  runtime = createQuickJSRuntime({ poolSize: 1 })
})
afterAll(async () => {
  await runtime.dispose()
})

const asMcp = (tool: { name: string; description: string; parameters: object }): Tool => ({
  name: tool.name,
  description: tool.description,
  inputSchema: tool.parameters as Tool['inputSchema'],
})

const BUDGET = 8_000

async function serve() {
  let github = githubCatalog().map(asMcp)
  let announce: () => Promise<void> = async () => undefined
  const upstreams = [
    {
      name: 'rest',
      transport: inMemoryFixture({
        extraTools: () => github,
        onServer: (server) => (announce = () => server.sendToolListChanged()),
      }),
    },
    // The published tool lists of well-known MCP servers, served under their own names as ptc serve would.
    ...MCP_SERVERS.map((name) => ({
      name,
      transport: inMemoryFixture({
        extraTools: mcpServerTools(name).map((t) => asMcp({ ...t, name: t.name.slice(name.length + 1) })),
      }),
    })),
  ]
  const ptc = await createPtcMcpServer({ upstreams, runtime, maxUpstreamTools: 2_000, onWarning: () => undefined })
  const client = await connectInMemory(ptc)
  const change = async (next: Tool[]) => {
    github = next
    await announce()
  }
  return { ptc, client, change, github: () => github }
}

test('over hundreds of upstream tools, run_code stays within the budget and search_tools finds and calls them', async () => {
  const { ptc, client } = await serve()
  try {
    const listed = (await client.listTools()).tools
    expect(ptc.tools.definitions(ptc.agent).length).toBeGreaterThan(1_000)
    expect(listed.map((t) => t.name)).toEqual(['run_code', 'search_tools'])
    const description = listed[0]?.description ?? ''
    expect(description.length).toBeLessThanOrEqual(RUN_CODE_DESCRIPTION.length + 2 + BUDGET)
    expect(description).toMatch(/^- rest \(\d+ tools\)/m)

    const searched = (await client.callTool({
      name: 'search_tools',
      arguments: { query: 'open a new issue in a repository', limit: 5 },
    })) as CallToolResult
    const names = (searched.structuredContent as { tools: { name: string }[] }).tools.map((t) => t.name)
    expect(names).toContain('rest.issues_create')

    const code = `
      const { tools: found } = await tools.search_tools({ query: 'rest.issues_create' })
      return await tools[found[0].name]({ owner: 'o', repo: 'r', title: 't' })
    `
    const ran = (await client.callTool({
      name: 'run_code',
      arguments: { code, description: 'search and call' },
    })) as CallToolResult
    expect(ran.structuredContent).toEqual({ logs: [], result: 'called issues_create' })
  } finally {
    await client.close()
    await ptc.close()
  }
})

test("an upstream's list_changed updates the index without changing the description's bytes", async () => {
  const { ptc, client, change, github } = await serve()
  try {
    const before = (await client.listTools()).tools[0]?.description
    const query = { name: 'search_tools', arguments: { query: 'teleport a quokka', limit: 3 } }
    const first = (await client.callTool(query)) as CallToolResult
    expect((first.structuredContent as { tools: { name: string }[] }).tools.map((t) => t.name)).not.toContain(
      'rest.meta_get_zen',
    )

    // The same tools, one described anew: the catalog's names and counts are the same, so is the text.
    await change(
      github().map((t) =>
        t.name === 'meta_get_zen' ? { ...t, description: 'Teleport a quokka to the zen garden.' } : t,
      ),
    )
    await expect
      .poll(() => ptc.tools.get('rest.meta_get_zen', ptc.agent)?.description)
      .toBe('Teleport a quokka to the zen garden.')
    expect((await client.listTools()).tools[0]?.description).toBe(before)
    const after = (await client.callTool(query)) as CallToolResult
    expect((after.structuredContent as { tools: { name: string }[] }).tools[0]?.name).toBe('rest.meta_get_zen')
  } finally {
    await client.close()
    await ptc.close()
  }
})
