import { describe, expect, test } from 'vitest'
import { githubCatalog } from '../../../../../test/fixtures/catalogs/github.js'
import { mcpCatalog } from '../../../../../test/fixtures/catalogs/mcp-servers.js'
import { recall } from '../../../../../bench/discovery/recall.js'
import { HELD_OUT_TASKS, TUNING_TASKS } from '../../../../../bench/discovery/tasks.js'
import { ToolSearchIndex } from './index.js'

function indexOf(tools: ReturnType<typeof githubCatalog>): ToolSearchIndex {
  const index = new ToolSearchIndex()
  for (const tool of tools) index.add({ key: tool.name, description: tool.description, parameters: tool.parameters })
  return index
}

describe('retrieval quality on the GitHub REST catalog', () => {
  const index = indexOf(githubCatalog())
  const search = (query: string, limit: number): string[] => index.search(query, { limit }).map((hit) => hit.key)

  test('the task set is large enough and names only tools that exist', () => {
    expect(TUNING_TASKS.length + HELD_OUT_TASKS.length).toBeGreaterThanOrEqual(80)
    expect(HELD_OUT_TASKS.length).toBeGreaterThanOrEqual(20)
    const names = new Set(githubCatalog().map((tool) => tool.name))
    for (const task of [...TUNING_TASKS, ...HELD_OUT_TASKS])
      for (const name of task.expected) expect(names).toContain(name)
  })

  test('the expected tool is in the top 5 for at least 90% of the requests', () => {
    const tuning = recall(TUNING_TASKS, search)
    const all = recall([...TUNING_TASKS, ...HELD_OUT_TASKS], search)
    expect(tuning.at5, JSON.stringify(tuning.misses, null, 1)).toBeGreaterThanOrEqual(0.9)
    expect(all.at5, JSON.stringify(all.misses, null, 1)).toBeGreaterThanOrEqual(0.9)
  })

  test('the held-out requests, never tuned on, still find their tool in the top 5 at least 85% of the time', () => {
    expect(recall(HELD_OUT_TASKS, search).at5).toBeGreaterThanOrEqual(0.85)
  })
})

describe('retrieval on the MCP servers together', () => {
  const index = indexOf(mcpCatalog())
  const top3 = (query: string): string[] => index.search(query, { limit: 3 }).map((hit) => hit.key)

  test.each([
    ['read a text file from disk', 'filesystem.read_text_file'],
    ['post a message to a Slack channel', 'slack.slack_post_message'],
    ['take a screenshot of the web page', 'playwright.browser_take_screenshot'],
    ['store a new entity in the knowledge graph', 'memory.create_entities'],
    ['click a button on the page', 'playwright.browser_click'],
  ])('%s -> %s in the top 3', (query, expected) => {
    expect(top3(query)).toContain(expected)
  })
})
