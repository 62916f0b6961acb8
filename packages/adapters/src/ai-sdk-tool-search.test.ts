/**
 * `toAiSdkTools` with deferred tools, on every major: the provider's tool search (ai 6 and 7: each deferred tool
 * carries `providerOptions.<provider>.deferLoading`, the provider runs the search) and ai 7's own `toolSearch()`.
 */
import { generateText as generateText5, jsonSchema as jsonSchema5, stepCountIs as stepCountIs5 } from 'ai5'
import { MockLanguageModelV2 } from 'ai5/test'
import { generateText as generateText6, jsonSchema, stepCountIs as stepCountIs6 } from 'ai'
import { MockLanguageModelV3 } from 'ai/test'
import { generateText as generateText7, stepCountIs as stepCountIs7, toolSearch } from 'ai7'
import { MockLanguageModelV4 } from 'ai7/test'
import { fixtureTools } from '@ptc/ptc/testing'
import { createNativeExecutor, MemorySession, ToolsService, type Agent } from '@ptc/tools'
import { describe, expect, test } from 'vitest'
import { thrownBy } from '../../../test/support/thrown.js'
import { toAiSdkTools, WireNameCollisionError } from './index.js'

/** `lookup` (always loaded) and `write` (deferred), run by the native executor; `writes` records what ran. */
function host(): { tools: ToolsService; agent: Agent; writes: string[] } {
  const tools = new ToolsService()
  for (const t of fixtureTools()) tools.register(t)
  tools.setExecutor(createNativeExecutor())
  const writes: string[] = []
  tools.on('tools/result', (exec, result) => {
    if (exec.name === 'write') writes.push(result.isError ? 'error' : 'wrote')
  })
  return { tools, agent: { id: 'agent', session: new MemorySession() }, writes }
}

const objectSchema = jsonSchema({ type: 'object' })
/** A provider's search tool as `@ai-sdk/anthropic` 3 builds it (ai 6 and 7: type `provider`). */
const anthropicSearch = {
  type: 'provider',
  id: 'anthropic.tool_search_bm25_20251119',
  args: {},
  inputSchema: objectSchema,
}

const usage = {
  inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 1, text: 1, reasoning: 0 },
}
const step = (unified: string, ...content: unknown[]) => ({
  content,
  finishReason: { unified, raw: unified },
  usage,
  warnings: [],
})
const done = step('stop', { type: 'text', text: 'done' })
const writeCall = { type: 'tool-call', toolCallId: 'w1', toolName: 'write', input: JSON.stringify({ key: 'k' }) }
type Call = { tools?: Array<{ name: string; type: string; providerOptions?: unknown }> }
type Generate = (options: unknown) => Promise<{ text: string }>

describe.each([
  ['ai 6', MockLanguageModelV3, generateText6 as unknown as Generate, stepCountIs6],
  ['ai 7', MockLanguageModelV4, generateText7 as unknown as Generate, stepCountIs7],
] as const)("the provider's tool search with %s", (_name, Mock, generate, stepCountIs) => {
  test('deferred tools carry the provider mark beside its search tool; it searches; the call runs', async () => {
    const { tools, agent, writes } = host()
    const deferral = { deferLoading: true, alwaysLoaded: ['lookup'], toolSearch: anthropicSearch as never }
    const { tools: aiTools } = toAiSdkTools(tools, { agent, ...deferral })
    const search = { toolCallId: 'srvtoolu_1', toolName: 'tool_search' }
    const searched = step(
      'tool-calls',
      { type: 'tool-call', ...search, input: '{"query":"write a key"}', providerExecuted: true },
      { type: 'tool-result', ...search, result: [{ type: 'tool_reference', toolName: 'write' }] },
      writeCall,
    )
    const model = new Mock({ doGenerate: [searched, done] } as never)
    const result = await generate({ model, tools: aiTools, prompt: 'write k', stopWhen: stepCountIs(3) })
    expect(result.text).toBe('done')
    expect(writes).toEqual(['wrote'])
    const declared = (model.doGenerateCalls[0] as Call).tools ?? []
    expect(declared.map((t) => [t.name, t.type, t.providerOptions])).toEqual([
      ['lookup', 'function', undefined],
      ['write', 'function', { anthropic: { deferLoading: true } }],
      ['tool_search', 'provider', undefined],
    ])
  })
})

test("ai 7's own toolSearch(): a deferred tool is declared once found, with any provider", async () => {
  const { tools, agent, writes } = host()
  const deferral = { deferLoading: (name: string) => name === 'write', toolSearch: toolSearch() as never }
  const { tools: aiTools } = toAiSdkTools(tools, { agent, ...deferral })
  const searchCall = { type: 'tool-call', toolCallId: 's1', toolName: 'tool_search', input: '{"query":"write"}' }
  const steps = [step('tool-calls', searchCall), step('tool-calls', writeCall), done]
  const model = new MockLanguageModelV4({ doGenerate: steps } as never)
  const generate = generateText7 as unknown as Generate
  expect((await generate({ model, tools: aiTools, prompt: 'write k', stopWhen: stepCountIs7(4) })).text).toBe('done')
  expect(writes).toEqual(['wrote'])
  const names = (i: number) => ((model.doGenerateCalls[i] as Call).tools ?? []).map((t) => t.name).sort()
  expect(names(0)).toEqual(['lookup', 'tool_search'])
  expect(names(1)).toEqual(['lookup', 'tool_search', 'write'])
})

test('ai 5 passes the provider mark on to its providers (which ignore it: no ai 5 provider defers tools)', async () => {
  const { tools, agent } = host()
  const openaiSearch = { type: 'provider-defined', id: 'openai.tool_search', name: 'tool_search', args: {} }
  const search = { ...openaiSearch, inputSchema: jsonSchema5({ type: 'object' }) } as never
  const deferral = { deferLoading: true, alwaysLoaded: ['lookup'], toolSearch: search }
  const { tools: aiTools } = toAiSdkTools(tools, { agent, ...deferral })
  const usageV2 = { inputTokens: 1, outputTokens: 1, totalTokens: 2 }
  const text = { content: [{ type: 'text' as const, text: 'done' }], finishReason: 'stop' as const, usage: usageV2 }
  const model = new MockLanguageModelV2({ doGenerate: [{ ...text, warnings: [] }] })
  await generateText5({ model, tools: aiTools, prompt: 'x', stopWhen: stepCountIs5(1) } as never)
  const declared = (model.doGenerateCalls[0] as Call).tools ?? []
  expect(declared.find((t) => t.name === 'write')?.providerOptions).toEqual({ openai: { deferLoading: true } })
  expect(declared.find((t) => t.name === 'lookup')?.providerOptions).toBeUndefined()
})

describe('toAiSdkTools deferral options', () => {
  test('without them the tools are as before: no marks, no search tool', () => {
    const { tools, agent } = host()
    const { tools: aiTools } = toAiSdkTools(tools, { agent })
    expect(Object.keys(aiTools)).toEqual(['lookup', 'write'])
    for (const t of Object.values(aiTools)) {
      expect(t).not.toHaveProperty('providerOptions')
      expect(t).not.toHaveProperty('deferLoading')
    }
  })

  test('deferring with nothing to find the deferred tools, or a toolSearch that is no tool search, is refused', () => {
    const { tools } = host()
    expect(() => toAiSdkTools(tools, { deferLoading: true, alwaysLoaded: ['lookup'] })).toThrow(
      "deferLoading defers 1 tool(s), but no search tool finds them: pass toolSearch (the provider's, " +
        "anthropic.tools.toolSearchBm25_20251119() or openai.tools.toolSearch(), or ai 7's toolSearch())",
    )
    const webSearch = { type: 'provider', id: 'anthropic.web_search_20250305', args: {}, inputSchema: objectSchema }
    expect(() => toAiSdkTools(tools, { deferLoading: true, toolSearch: webSearch as never })).toThrow(
      /toolSearch must be a tool search .* not a tool of type "provider" and id "anthropic.web_search_20250305"/,
    )
    expect(() => toAiSdkTools(tools, { deferLoading: 'all' as never })).toThrow(
      'deferLoading must be true, false or a function of a tool name, not "all"',
    )
  })

  test('a tool named tool_search is refused when the search tool would take its name', () => {
    const { tools } = host()
    tools.register({ ...fixtureTools()[0]!, name: 'tool_search' })
    const error = thrownBy(() => toAiSdkTools(tools, { toolSearch: anthropicSearch as never }))
    expect(error).toBeInstanceOf(WireNameCollisionError)
    expect((error as Error).message).toBe(
      'tool "tool_search" has the provider name "tool_search", which the search tool of toAiSdkTools (toolSearch) ' +
        'takes: rename the tool',
    )
  })
})
