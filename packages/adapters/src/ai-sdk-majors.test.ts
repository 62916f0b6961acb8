/**
 * `toAiSdkTools` with every major of the AI SDK the registry serves (5, 6 and 7, installed side by side as
 * `ai5`, `ai` and `ai7`): `generateText` with each major's own mock model calls `run_code`, the program calls a
 * tool through the pipeline, and the model reads the result.
 */
import { generateText as generateText5, stepCountIs as stepCountIs5 } from 'ai5'
import { MockLanguageModelV2 } from 'ai5/test'
import { generateText as generateText6, stepCountIs as stepCountIs6 } from 'ai'
import { MockLanguageModelV3 } from 'ai/test'
import { generateText as generateText7, stepCountIs as stepCountIs7 } from 'ai7'
import { MockLanguageModelV4 } from 'ai7/test'
import { createPtcExecutor } from '@ptc/ptc'
import { FakeRuntime, fixtureTools } from '@ptc/ptc/testing'
import { MemorySession, ToolsService, type Agent } from '@ptc/tools'
import { describe, expect, test } from 'vitest'
import { toAiSdkTools } from './index.js'

function host(): { tools: ToolsService; runtime: FakeRuntime; agent: Agent; session: MemorySession } {
  const runtime = new FakeRuntime()
  const tools = new ToolsService()
  for (const t of fixtureTools()) tools.register(t)
  tools.setExecutor(createPtcExecutor({ runtime }))
  const session = new MemorySession()
  return { tools, runtime, agent: { id: 'agent', session }, session }
}

const usageV2 = { inputTokens: 1, outputTokens: 1, totalTokens: 2 }
const usageV3 = {
  inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 1, text: 1, reasoning: 0 },
}

/**
 * One major: its generateText, and a mock model that calls run_code with `input`, then answers `done`. The
 * options are cast: the adapter's tools are typed with the `ai` it is built against, one major of the three.
 */
interface Major {
  readonly name: string
  run(aiTools: Record<string, unknown>, system: string, input: unknown): Promise<{ text: string; lastPrompt: unknown }>
}

const majors: Major[] = [
  {
    name: 'ai 5',
    async run(aiTools, system, input) {
      const model = new MockLanguageModelV2({
        doGenerate: [
          {
            content: [{ type: 'tool-call', toolCallId: 'c1', toolName: 'run_code', input: JSON.stringify(input) }],
            finishReason: 'tool-calls',
            usage: usageV2,
            warnings: [],
          },
          { content: [{ type: 'text', text: 'done' }], finishReason: 'stop', usage: usageV2, warnings: [] },
        ],
      })
      const result = await generateText5({
        model,
        system,
        tools: aiTools,
        prompt: 'go',
        stopWhen: stepCountIs5(3),
      } as never)
      return { text: result.text, lastPrompt: model.doGenerateCalls[1]?.prompt.at(-1) }
    },
  },
  ...(
    [
      ['ai 6', MockLanguageModelV3, generateText6, stepCountIs6],
      ['ai 7', MockLanguageModelV4, generateText7, stepCountIs7],
    ] as const
  ).map(
    ([name, Mock, generateText, stepCountIs]): Major => ({
      name,
      // ai 6 and 7 models (V3, V4) answer in the same shape.
      async run(aiTools, system, input) {
        const model = new Mock({
          doGenerate: [
            {
              content: [{ type: 'tool-call', toolCallId: 'c1', toolName: 'run_code', input: JSON.stringify(input) }],
              finishReason: { unified: 'tool-calls', raw: 'tool_calls' },
              usage: usageV3,
              warnings: [],
            },
            {
              content: [{ type: 'text', text: 'done' }],
              finishReason: { unified: 'stop', raw: 'stop' },
              usage: usageV3,
              warnings: [],
            },
          ],
        } as never)
        const generate = generateText as (options: never) => Promise<{ text: string }>
        const result = await generate({
          model,
          system,
          tools: aiTools,
          prompt: 'go',
          stopWhen: stepCountIs(3),
        } as never)
        return { text: result.text, lastPrompt: model.doGenerateCalls[1]?.prompt.at(-1) }
      },
    }),
  ),
]

describe.each(majors)('toAiSdkTools with $name', (major) => {
  test('generateText: the model calls run_code, the program calls a tool through the pipeline, the model reads the result', async () => {
    const { tools, runtime, agent, session } = host()
    const code = runtime.define('lookup', async (t) => (await t['lookup']?.({ key: 'abcd' })) as never)
    const { tools: aiTools, instructions } = toAiSdkTools(tools, { agent, log: { turn: 1, step: 1 } })
    const { text, lastPrompt } = await major.run(aiTools, instructions, { code, description: 'look up a key' })
    expect(text).toBe('done')
    expect(JSON.stringify(lastPrompt)).toContain('\\"value\\": 4')
    expect(session.events.filter((e) => e.type === 'tool/ptc-dispatch').map((e) => e['subCallId'])).toEqual([
      'c1:ptc:1',
    ])
  })
})

test('images reach each major in its own part: ai 6 and 7 take image-data, ai 5 (which passes the output itself) media', () => {
  const { tools, agent } = host()
  const run = toAiSdkTools(tools, { agent }).tools['run_code']
  const output = {
    content: [
      { type: 'text' as const, text: 'a chart' },
      { type: 'image' as const, mimeType: 'image/png', data: 'AAA' },
    ],
  }
  const toModelOutput = run?.toModelOutput as ((options: unknown) => unknown) | undefined
  expect(toModelOutput?.({ toolCallId: 'c1', input: {}, output })).toEqual({
    type: 'content',
    value: [
      { type: 'text', text: 'a chart' },
      { type: 'image-data', data: 'AAA', mediaType: 'image/png' },
    ],
  })
  expect(toModelOutput?.(output)).toEqual({
    type: 'content',
    value: [
      { type: 'text', text: 'a chart' },
      { type: 'media', data: 'AAA', mediaType: 'image/png' },
    ],
  })
})

/** A host whose policy asks before every run_code, with no approval service (an ask that reaches the service is DENIED). */
function askingHost(): ReturnType<typeof host> & { runs: string[] } {
  const h = host()
  const runs: string[] = []
  h.tools.on('tools/pre-execute', (exec, next) =>
    exec.name === 'run_code' ? { kind: 'ask', reason: 'programs need a yes' } : next(),
  )
  h.tools.on(
    'tools/result',
    (exec, result) =>
      void (exec.name === 'run_code' && runs.push(result.isError ? `error ${result.error.info?.code ?? ''}` : 'ran')),
  )
  return { ...h, runs }
}

describe.each([
  ['ai 6', MockLanguageModelV3, generateText6, stepCountIs6],
  ['ai 7', MockLanguageModelV4, generateText7, stepCountIs7],
] as const)("approval: 'ai-sdk' with %s", (_name, Mock, generateText, stepCountIs) => {
  type Part = { type: string; approvalId?: string; toolCallId?: string; output?: unknown }
  type Result = { text: string; content: Part[]; response: { messages: unknown[] } }
  const generate = generateText as unknown as (options: unknown) => Promise<Result>

  async function approveOrDeny(approved: boolean) {
    const h = askingHost()
    const code = h.runtime.define('lookup', async (t) => (await t['lookup']?.({ key: 'abcd' })) as never)
    const model = new Mock({
      doGenerate: [
        {
          content: [
            {
              type: 'tool-call',
              toolCallId: 'c1',
              toolName: 'run_code',
              input: JSON.stringify({ code, description: 'look up' }),
            },
          ],
          finishReason: { unified: 'tool-calls', raw: 'tool_calls' },
          usage: usageV3,
          warnings: [],
        },
        {
          content: [{ type: 'text', text: 'done' }],
          finishReason: { unified: 'stop', raw: 'stop' },
          usage: usageV3,
          warnings: [],
        },
      ],
    } as never)
    const { tools: aiTools, instructions } = toAiSdkTools(h.tools, { agent: h.agent, approval: 'ai-sdk' })
    const first = await generate({
      model,
      system: instructions,
      tools: aiTools,
      prompt: 'go',
      stopWhen: stepCountIs(3),
    })
    const request = first.content.find((p) => p.type === 'tool-approval-request')
    // generateText stopped for the approval: nothing ran yet.
    expect(request?.approvalId).toEqual(expect.any(String))
    expect(h.runs).toEqual([])
    const messages = [
      { role: 'user', content: 'go' },
      ...first.response.messages,
      { role: 'tool', content: [{ type: 'tool-approval-response', approvalId: request?.approvalId, approved }] },
    ]
    const second = await generate({ model, system: instructions, tools: aiTools, messages, stopWhen: stepCountIs(3) })
    return { h, second, lastPrompt: JSON.stringify(model.doGenerateCalls[1]?.prompt.at(-1)) }
  }

  test("a policy's ask becomes an approval request; once approved the call runs without the approval service", async () => {
    const { h, second, lastPrompt } = await approveOrDeny(true)
    expect(second.text).toBe('done')
    expect(h.runs).toEqual(['ran'])
    expect(lastPrompt).toContain('\\"value\\": 4')
  })

  test('a denied approval never runs the call; the model is told', async () => {
    const { h, second, lastPrompt } = await approveOrDeny(false)
    expect(second.text).toBe('done')
    expect(h.runs).toEqual([])
    expect(lastPrompt).toMatch(/denied/i)
  })

  test("a call the policies allow needs no approval; the default 'service' mode asks the approval service instead", async () => {
    const h = askingHost()
    const { tools: aiTools } = toAiSdkTools(h.tools, { agent: h.agent })
    expect((aiTools['run_code'] as { needsApproval?: unknown }).needsApproval).toBeUndefined()
    const { tools: asking } = toAiSdkTools(h.tools, { agent: h.agent, approval: 'ai-sdk' })
    const needsApproval = (
      asking['run_code'] as unknown as {
        needsApproval: (input: unknown, options: { toolCallId: string }) => Promise<boolean>
      }
    ).needsApproval
    expect(await needsApproval({ code: 'x', description: 'd' }, { toolCallId: 'c9' })).toBe(true)
    const open = host()
    const { tools: plain } = toAiSdkTools(open.tools, { agent: open.agent, approval: 'ai-sdk' })
    expect(
      await (plain['run_code'] as unknown as { needsApproval: typeof needsApproval }).needsApproval(
        { code: 'x', description: 'd' },
        { toolCallId: 'c9' },
      ),
    ).toBe(false)
  })
})

test('an approval holds for the call it was asked for: a call reusing its id with another input is asked again', async () => {
  const h = askingHost()
  const code = h.runtime.define('lookup', async (t) => (await t['lookup']?.({ key: 'abcd' })) as never)
  const other = h.runtime.define('other', async (t) => (await t['lookup']?.({ key: 'xy' })) as never)
  const { tools: aiTools } = toAiSdkTools(h.tools, { agent: h.agent, approval: 'ai-sdk' })
  const run = aiTools['run_code'] as unknown as {
    needsApproval: (input: unknown, options: { toolCallId: string }) => Promise<boolean>
    execute: (input: unknown, options: { toolCallId: string; messages: unknown[] }) => Promise<unknown>
  }
  const approved = { code, description: 'look up' }
  expect(await run.needsApproval(approved, { toolCallId: 'c1' })).toBe(true)
  // The same id with another program was never approved: the approval service answers (none here: denied).
  await expect(
    run.execute({ code: other, description: 'look up' }, { toolCallId: 'c1', messages: [] }),
  ).rejects.toThrow(/no approval service/)
  // The approved call itself runs, once.
  await expect(run.execute(approved, { toolCallId: 'c1', messages: [] })).resolves.toMatchObject({
    content: [{ type: 'text' }],
  })
  await expect(run.execute(approved, { toolCallId: 'c1', messages: [] })).rejects.toThrow(/no approval service/)
  expect(h.runs).toEqual(['error DENIED', 'ran', 'error DENIED'])
})

test("ai 5 has no tool approval: with approval 'ai-sdk' the approval service answers, as by default", async () => {
  const h = askingHost()
  const code = h.runtime.define('lookup', async (t) => (await t['lookup']?.({ key: 'abcd' })) as never)
  const { tools: aiTools, instructions } = toAiSdkTools(h.tools, { agent: h.agent, approval: 'ai-sdk' })
  await majors[0]!.run(aiTools, instructions, { code, description: 'look up' })
  // No approval service: the ask is a denial, and the body never ran.
  expect(h.runs).toEqual(['error DENIED'])
})

test('approval must be service or ai-sdk', () => {
  expect(() => toAiSdkTools(host().tools, { approval: 'model' as never })).toThrow(
    /approval must be 'service' or 'ai-sdk', not "model"/,
  )
})
