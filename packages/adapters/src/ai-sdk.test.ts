import type { LanguageModelV3GenerateResult } from '@ai-sdk/provider'
import { generateText, stepCountIs, tool } from 'ai'
import { MockLanguageModelV3 } from 'ai/test'
import { createPtcExecutor } from '@ptc/ptc'
import { FakeRuntime, fixtureTools } from '@ptc/ptc/testing'
import { createNativeExecutor, defineTool, MemorySession, ToolsService, type Agent } from '@ptc/tools'
import { describe, expect, test } from 'vitest'
import { z } from 'zod'
import { fromAiSdkTools, toAiSdkTools } from './index.js'

const usage = {
  inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 1, text: 1, reasoning: 0 },
}
const toolCall = (id: string, name: string, input: unknown): LanguageModelV3GenerateResult => ({
  content: [{ type: 'tool-call', toolCallId: id, toolName: name, input: JSON.stringify(input) }],
  finishReason: { unified: 'tool-calls', raw: 'tool_calls' },
  usage,
  warnings: [],
})
const answer = (text: string): LanguageModelV3GenerateResult => ({
  content: [{ type: 'text', text }],
  finishReason: { unified: 'stop', raw: 'stop' },
  usage,
  warnings: [],
})

function host(mode: 'code' | 'both'): {
  tools: ToolsService
  runtime: FakeRuntime
  agent: Agent
  session: MemorySession
} {
  const runtime = new FakeRuntime()
  const tools = new ToolsService()
  for (const t of fixtureTools()) tools.register(t)
  tools.setExecutor(createPtcExecutor({ runtime, mode }))
  const session = new MemorySession()
  return { tools, runtime, agent: { id: 'agent', session }, session }
}

describe('toAiSdkTools', () => {
  test('a generateText loop: the model calls run_code, the program calls tools through the pipeline, the model reads the result', async () => {
    const { tools, runtime, agent, session } = host('code')
    const code = runtime.define('lookup both', async (t) => {
      const [a, b] = await Promise.all([t['lookup']?.({ key: 'ab' }), t['lookup']?.({ key: 'abcd' })])
      return { a, b } as never
    })
    const { tools: aiTools, instructions } = toAiSdkTools(tools, { agent, log: { turn: 1, step: 1 } })
    expect(Object.keys(aiTools)).toEqual(['run_code'])
    expect(instructions).toContain('declare const tools')
    const model = new MockLanguageModelV3({
      doGenerate: [toolCall('c1', 'run_code', { code, description: 'look up two keys' }), answer('done')],
    })
    const result = await generateText({
      model,
      system: instructions,
      tools: aiTools,
      prompt: 'look up ab and abcd',
      stopWhen: stepCountIs(5),
    })
    expect(result.text).toBe('done')
    expect(model.doGenerateCalls).toHaveLength(2)
    const first = model.doGenerateCalls[0]
    expect(first?.prompt[0]).toMatchObject({ role: 'system', content: instructions })
    expect(first?.tools?.map((t) => t.name)).toEqual(['run_code'])
    const toolMessage = JSON.stringify(model.doGenerateCalls[1]?.prompt.at(-1))
    expect(toolMessage).toContain('\\"value\\": 2')
    expect(toolMessage).toContain('\\"value\\": 4')
    expect(session.events.filter((e) => e.type === 'tool/ptc-dispatch').map((e) => e['subCallId'])).toEqual([
      'c1:ptc:1',
      'c1:ptc:2',
    ])
  })

  test('both mode adds the native tools; a failed call reaches the model as a tool error', async () => {
    const { tools, agent } = host('both')
    const { tools: aiTools } = toAiSdkTools(tools, { agent })
    expect(Object.keys(aiTools).sort()).toEqual(['lookup', 'run_code', 'write'])
    const model = new MockLanguageModelV3({ doGenerate: [toolCall('c1', 'lookup', { key: 7 }), answer('ok')] })
    await generateText({ model, tools: aiTools, prompt: 'x', stopWhen: stepCountIs(3) })
    const last = JSON.stringify(model.doGenerateCalls[1]?.prompt.at(-1))
    expect(last).toMatch(/error/)
  })
})

describe('toAiSdkTools: the calls of one model step', () => {
  /** Tools that record how many of their calls run at once. */
  function overlapHost(): { tools: ToolsService; agent: Agent; peak: Record<string, number> } {
    const tools = new ToolsService()
    const peak: Record<string, number> = {}
    let running = 0
    for (const [name, safe] of [
      ['exclusive_write', false],
      ['safe_read', true],
    ] as const) {
      tools.register(
        defineTool({
          name,
          description: `${name} a key.`,
          parameters: { key: { type: 'string', required: true } },
          output: { schema: { type: 'string' }, render: (_args, value) => [{ type: 'text', text: value }] },
          ...(safe && { isConcurrencySafe: () => true }),
          execute: async ({ key }) => {
            running++
            peak[name] = Math.max(peak[name] ?? 0, running)
            await new Promise((resolve) => setTimeout(resolve, 20))
            running--
            return `${name} ${key}`
          },
        }),
      )
    }
    tools.setExecutor(createNativeExecutor())
    return { tools, agent: { id: 'agent', session: new MemorySession() }, peak }
  }
  const step = (calls: [string, string, unknown][]): LanguageModelV3GenerateResult => ({
    content: calls.map(([id, name, input]) => ({
      type: 'tool-call' as const,
      toolCallId: id,
      toolName: name,
      input: JSON.stringify(input),
    })),
    finishReason: { unified: 'tool-calls', raw: 'tool_calls' },
    usage,
    warnings: [],
  })

  test('three calls of a tool that is not concurrency-safe run one at a time, as one batch; each result reaches the model', async () => {
    const { tools, agent, peak } = overlapHost()
    const { tools: aiTools } = toAiSdkTools(tools, { agent })
    const model = new MockLanguageModelV3({
      doGenerate: [
        step([
          ['w1', 'exclusive_write', { key: 'a' }],
          ['w2', 'exclusive_write', { key: 'b' }],
          ['w3', 'exclusive_write', { key: 'c' }],
        ]),
        answer('done'),
      ],
    })
    const result = await generateText({ model, tools: aiTools, prompt: 'write three', stopWhen: stepCountIs(3) })
    expect(result.text).toBe('done')
    expect(peak['exclusive_write']).toBe(1)
    const toolMessage = JSON.stringify(model.doGenerateCalls[1]?.prompt.at(-1))
    for (const key of ['a', 'b', 'c']) expect(toolMessage).toContain(`exclusive_write ${key}`)
  })

  test('concurrency-safe calls of the same step still overlap', async () => {
    const { tools, agent, peak } = overlapHost()
    const { tools: aiTools } = toAiSdkTools(tools, { agent })
    const model = new MockLanguageModelV3({
      doGenerate: [
        step([
          ['r1', 'safe_read', { key: 'a' }],
          ['r2', 'safe_read', { key: 'b' }],
          ['r3', 'safe_read', { key: 'c' }],
        ]),
        answer('done'),
      ],
    })
    await generateText({ model, tools: aiTools, prompt: 'read three', stopWhen: stepCountIs(3) })
    expect(peak['safe_read']).toBe(3)
  })
})

describe('fromAiSdkTools', () => {
  test('AI SDK tools with zod and JSON schemas become ToolDefinitions a program can call, validated by their own schema', async () => {
    const warnings: string[] = []
    const defs = fromAiSdkTools(
      {
        weather: tool({
          description: 'Weather of a city.',
          inputSchema: z.object({ city: z.string().min(2), unit: z.enum(['c', 'f']).optional() }),
          outputSchema: z.object({ temp: z.number() }),
          execute: async ({ city }) => ({ temp: city.length }),
        }),
        noExecute: tool({ description: 'client side', inputSchema: z.object({}) }),
      },
      { onWarning: (m) => warnings.push(m) },
    )
    expect(defs.map((d) => d.name)).toEqual(['weather'])
    expect(warnings).toContainEqual(
      expect.stringMatching(/weather: input \/properties\/city\/minLength: dropped "minLength"/),
    )
    expect(warnings).toContainEqual(expect.stringMatching(/skipped tool noExecute/))
    expect(defs[0]?.parameters).toMatchObject({
      type: 'object',
      properties: { city: { type: 'string' }, unit: { type: 'string', enum: ['c', 'f'] } },
      required: ['city'],
    })
    const tools = new ToolsService()
    for (const d of defs) tools.register(d)
    const run = (args: unknown) =>
      tools.execute({
        calls: [{ type: 'tool_call', id: 'x', name: 'weather', arguments: JSON.stringify(args) }],
        signal: new AbortController().signal,
      })
    const ok = (await run({ city: 'Paris' })).results[0]?.result
    expect(ok?.isError === false && ok.value).toEqual({ temp: 5 })
    const bad = (await run({ city: 'P' })).results[0]?.result
    expect(bad?.isError === true && bad.error.info?.code).toBe('INVALID_ARGS')
  })
})
