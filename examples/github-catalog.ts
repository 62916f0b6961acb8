/**
 * Tool discovery over a large catalog: every operation of GitHub's REST API (about 1 100, from the OpenAPI
 * description in `@octokit/openapi`) is a tool, far past the discovery budget. The model reads a compact index
 * instead of every declaration, and its program finds the two tools it needs with `search_tools`, then calls
 * them. The tools are stubs that answer from a small in-memory repository instead of GitHub.
 *
 *   node --conditions=@ptc/source --import tsx examples/github-catalog.ts
 */
import { createPtcExecutor, sdkText } from '@ptc/ptc'
import { createQuickJSRuntime } from '@ptc/sandbox-quickjs'
import { MemorySession, prettyJson, ToolsService, type Agent, type JsonValue, type ToolDefinition } from '@ptc/tools'
import { githubCatalog } from '../test/fixtures/catalogs/github.js'

/** The program a model writes after reading the index: search, then call what it found. */
export const PROGRAM = `
const find = async (query: string) => (await tools.search_tools({ query, limit: 1 })).tools[0].name
const list = await find('list the issues of a repository')
const comment = await find('add a comment to an issue')
console.log('found', list, 'and', comment)
const issues = await tools[list]({ owner: 'acme', repo: 'rocket', state: 'open' })
const quiet = issues.filter((issue) => issue.comments === 0)
for (const issue of quiet) {
  await tools[comment]({ owner: 'acme', repo: 'rocket', issue_number: issue.number, body: 'Is this still happening?' })
}
return { pinged: quiet.map((issue) => issue.number) }
`

/** The stub repository the two tools answer from. */
const issues = [
  { number: 1, title: 'Launch pad is wobbly', comments: 3 },
  { number: 2, title: 'Fuel gauge reads empty', comments: 0 },
  { number: 3, title: 'Countdown skips 7', comments: 0 },
]
const comments: { issue: number; body: string }[] = []

function answer(name: string, args: Record<string, unknown>): JsonValue {
  if (name === 'issues_list_for_repo') return issues
  if (name === 'issues_create_comment') {
    comments.push({ issue: Number(args['issue_number']), body: String(args['body']) })
    return { id: comments.length, body: String(args['body']) }
  }
  return { stub: name }
}

function stubTool(tool: {
  name: string
  description: string
  parameters: ToolDefinition['parameters']
}): ToolDefinition {
  return {
    ...tool,
    output: { schema: {}, render: (_args, value) => [{ type: 'text', text: prettyJson(value) }] },
    isConcurrencySafe: () => true,
    execute: (args) => Promise.resolve(answer(tool.name, args as Record<string, unknown>)),
  }
}

const catalog = githubCatalog()
const tools = new ToolsService()
for (const tool of catalog) tools.register(stubTool(tool))
await using runtime = createQuickJSRuntime({ isolation: 'inline' })
tools.setExecutor(createPtcExecutor({ runtime }))
const session = new MemorySession()
const agent: Agent = { id: 'github-agent', session }

const input = tools.modelInput(agent)
const sdk = input.sections.map((s) => s.text).join('\n\n')
const full = sdkText(tools.definitions(agent))
console.log(`${catalog.length} tools. Model tools: ${input.schemas.map((s) => s.name).join(', ')}`)
console.log(`SDK text: ${sdk.length} characters with discovery, ${full.length} with every declaration`)

const batch = await tools.execute({
  calls: [
    {
      type: 'tool_call',
      id: 'call_1',
      name: 'run_code',
      arguments: JSON.stringify({ code: PROGRAM, description: 'ping quiet issues' }),
    },
  ],
  signal: new AbortController().signal,
  agent,
  log: { turn: 1, step: 1 },
})
const result = batch.results[0]?.result
if (result === undefined || result.isError) {
  console.error('the program failed:', result?.content)
  process.exitCode = 1
} else {
  const subCalls = session.events
    .filter((e) => e.type === 'tool/ptc-dispatch')
    .map((e) => (e as unknown as { name: string }).name)
  console.log(`Sub-calls: ${subCalls.join(', ')}`)
  console.log(`Comments posted: ${comments.map((c) => `#${c.issue}`).join(', ')}`)
  console.log(`The model receives:\n${result.content.map((b) => (b.type === 'text' ? b.text : '')).join('\n')}`)
}
