/**
 * Provider-hosted PTC end to end, with no network: the recorded-shape conversations of
 * `@ptc/adapters`'s fixtures (Anthropic programmatic tool calling, OpenAI Responses programmatic callers)
 * run through a ToolsService in PTC `both` mode with a policy, an approval service and a JSON Lines session,
 * and the built `ptc log` shows each program's calls under it, next to a `run_code` program's own.
 */
import {
  fromAnthropicToolUses,
  fromOpenAIResponsesOutput,
  toAnthropicToolResults,
  toAnthropicTools,
  toOpenAIResponsesInput,
  toOpenAIResponsesTools,
  type AnthropicToolResultMessage,
} from '@ptc/adapters'
import { createPtcExecutor } from '@ptc/ptc'
import { createQuickJSRuntime } from '@ptc/sandbox-quickjs'
import { defineTool, ToolsService, type Agent, type ApprovalRequest, type ToolBatchResult } from '@ptc/tools'
import { JsonlSession, readJsonlSession } from '@ptc/tools/session'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { anthropicTurns, openaiTurns } from '../../packages/adapters/src/fixtures/programmatic.js'
import { buildCli } from './build.js'
import { ptc, tempDir } from './cli.js'

beforeAll(() => buildCli(), 120_000)
const files = tempDir()
const runtime = createQuickJSRuntime({ isolation: 'inline' })
afterAll(async () => {
  await runtime.dispose()
  files.cleanup()
})

const REVENUE: Readonly<Record<string, number>> = { west: 120, east: 80, central: 95 }

/** A harness in PTC `both` mode: programs may not send reports, a program's call for `central` is asked about. */
async function harness(logFile: string) {
  const asked: string[] = []
  const approval = {
    request: async (request: ApprovalRequest) => (
      asked.push(`${request.exec.callId} ${request.reason ?? ''}`), 'allowed-once' as const
    ),
  }
  const tools = new ToolsService({ approval })
  tools.register(
    defineTool({
      name: 'query_sales',
      description: 'Sales of a region.',
      parameters: { region: { type: 'string', required: true } },
      output: {
        schema: {
          type: 'object',
          additionalProperties: false,
          properties: { region: { type: 'string' }, revenue: { type: 'integer' } },
        },
      },
      isConcurrencySafe: () => true,
      execute: async ({ region }) => ({ region, revenue: REVENUE[region] ?? 0 }),
    }),
  )
  tools.register(
    defineTool({
      name: 'send_report',
      description: 'Send a report by email.',
      parameters: { to: { type: 'string', required: true }, body: { type: 'string', required: true } },
      output: { schema: { type: 'object', additionalProperties: false, properties: { sent: { type: 'boolean' } } } },
      execute: async () => ({ sent: true }),
    }),
  )
  tools.on('tools/pre-execute', (exec, next) => {
    if (exec.parent === undefined) return next()
    if (exec.name === 'send_report') return { kind: 'deny', reason: 'a program may not send reports' }
    if ((exec.arguments as { region?: string }).region === 'central')
      return { kind: 'ask', reason: 'central figures are restricted' }
    return next()
  })
  tools.setExecutor(createPtcExecutor({ runtime, mode: 'both' }))
  const session = await JsonlSession.open(logFile)
  const agent: Agent = { id: 'agent', session }
  let turn = 0
  const execute = (calls: Parameters<ToolsService['execute']>[0]['calls']): Promise<ToolBatchResult> =>
    tools.execute({ calls, signal: new AbortController().signal, agent, log: { turn: ++turn, step: 1 } })
  return { tools, session, asked, execute, names: tools.schemas().map((s) => s.name) }
}

const resultTexts = (message: AnthropicToolResultMessage): Array<[string, boolean, string]> =>
  message.content.map((b) =>
    b.type === 'tool_result'
      ? [b.tool_use_id, b.is_error === true, b.content.map((c) => (c.type === 'text' ? c.text : '')).join('')]
      : ['', false, ''],
  )

describe('provider-hosted programs, end to end', () => {
  test('Anthropic: the calls of Claude’s code execution are sub-dispatches of its program, with policy, approval and `ptc log`', async () => {
    const logFile = files.path('anthropic.jsonl')
    const h = await harness(logFile)
    const declared = toAnthropicTools(h.tools.schemas(), { allowedCallers: ['direct', 'code_execution_20250825'] })
    expect(declared.map((t) => [t.name, t.allowed_callers])).toEqual([
      ['query_sales', ['direct', 'code_execution_20250825']],
      ['send_report', ['direct', 'code_execution_20250825']],
    ])

    const replies: AnthropicToolResultMessage[] = []
    for (const content of anthropicTurns)
      replies.push(
        toAnthropicToolResults(await h.execute(fromAnthropicToolUses({ role: 'assistant', content }, h.names))),
      )
    expect(replies.map(resultTexts)).toEqual([
      [
        ['toolu_01', false, '{\n  "region": "west",\n  "revenue": 120\n}'],
        ['toolu_02', false, '{\n  "region": "east",\n  "revenue": 80\n}'],
      ],
      [['toolu_03', false, '{\n  "region": "central",\n  "revenue": 95\n}']],
      [['toolu_04', true, 'Error: a program may not send reports']],
      [['toolu_05', false, '{\n  "sent": true\n}']],
    ])
    expect(h.asked).toEqual(['srvtoolu_01:ptc:3 central figures are restricted'])

    // The model's own program in the same session, for comparison.
    const own = await h.execute([
      {
        type: 'tool_call',
        id: 'toolu_06',
        name: 'run_code',
        arguments: JSON.stringify({
          code: 'return (await tools.query_sales({ region: "east" })).revenue',
          description: 'east revenue',
        }),
      },
    ])
    expect(own.results[0]?.result.isError).toBe(false)
    await h.session.close()

    const events = (await readJsonlSession(logFile)).events
    const programs = events.filter((e) => e.type === 'tool/ptc-program')
    expect(programs.map((e) => [e.callId, e.name, e.turn])).toEqual([['srvtoolu_01', 'code_execution_20250825', 1]])
    expect(
      events
        .filter((e) => e.type === 'tool/ptc-dispatch')
        .map((e) => [e.subCallId, e.parentCallId, e.callId ?? null, e.isError]),
    ).toEqual([
      ['srvtoolu_01:ptc:1', 'srvtoolu_01', 'toolu_01', false],
      ['srvtoolu_01:ptc:2', 'srvtoolu_01', 'toolu_02', false],
      ['srvtoolu_01:ptc:3', 'srvtoolu_01', 'toolu_03', false],
      ['srvtoolu_01:ptc:4', 'srvtoolu_01', 'toolu_04', true],
      ['toolu_06:ptc:1', 'toolu_06', null, false],
    ])
    // Only the model's direct calls are tool/call events.
    expect(events.filter((e) => e.type === 'tool/call').map((e) => e.callId)).toEqual(['toolu_05', 'toolu_06'])

    const log = await ptc(['log', logFile])
    expect(log.code).toBe(0)
    const lines = log.stdout.trimEnd().split('\n')
    expect(lines[0]).toMatch(
      /^code_execution_20250825 srvtoolu_01 \[turn 1, step 1\] import asyncio .* — a program the provider ran$/,
    )
    expect(lines.slice(1, 5)).toEqual([
      expect.stringMatching(/^ {2}├─ srvtoolu_01:ptc:1 query_sales\(\{"region":"west"\}\) — .* — ok /),
      expect.stringMatching(/^ {2}├─ srvtoolu_01:ptc:2 query_sales\(\{"region":"east"\}\) — .* — ok /),
      expect.stringMatching(/^ {2}├─ srvtoolu_01:ptc:3 query_sales\(\{"region":"central"\}\) — .* — ok /),
      expect.stringMatching(
        /^ {2}└─ srvtoolu_01:ptc:4 send_report\(.*\) — .* — error DENIED .*: Error: a program may not send reports$/,
      ),
    ])
    expect(lines[5]).toMatch(/^ {5}4 call\(s\) from the provider's program; \d+ B of tool results went to it$/)
    expect(lines[6]).toMatch(/^send_report toolu_05 \[turn 4, step 1\] .* — ok /)
    expect(lines[7]).toMatch(/^run_code toolu_06 \[turn 5, step 1\] "east revenue" — .* — ok /)
    expect(lines[8]).toMatch(/^ {2}└─ toolu_06:ptc:1 query_sales\(\{"region":"east"\}\) — .* — ok /)
    const json = JSON.parse((await ptc(['log', logFile, '--json'])).stdout) as {
      calls: Array<{ id: string; hosted: boolean; subCalls: unknown[] }>
    }
    expect(json.calls.map((c) => [c.id, c.hosted, c.subCalls.length])).toEqual([
      ['srvtoolu_01', true, 4],
      ['toolu_05', false, 0],
      ['toolu_06', false, 1],
    ])
  })

  test('OpenAI Responses: a program’s function calls are sub-dispatches of it; a direct call in the same response stays direct', async () => {
    const logFile = files.path('openai.jsonl')
    const h = await harness(logFile)
    expect(
      toOpenAIResponsesTools(h.tools.schemas(), { allowedCallers: ['programmatic'] }).map((t) => t.allowed_callers),
    ).toEqual([['programmatic'], ['programmatic']])
    const outputs = []
    for (const output of openaiTurns)
      outputs.push(toOpenAIResponsesInput(await h.execute(fromOpenAIResponsesOutput(output, h.names))))
    expect(outputs).toEqual([
      [
        { type: 'function_call_output', call_id: 'call_01', output: '{\n  "region": "west",\n  "revenue": 120\n}' },
        { type: 'function_call_output', call_id: 'call_02', output: '{\n  "region": "east",\n  "revenue": 80\n}' },
      ],
      [
        { type: 'function_call_output', call_id: 'call_03', output: 'Error: a program may not send reports' },
        { type: 'function_call_output', call_id: 'call_04', output: '{\n  "region": "central",\n  "revenue": 95\n}' },
      ],
    ])
    // The direct call for central is not a program's: the policy does not ask about it.
    expect(h.asked).toEqual([])
    await h.session.close()

    const lines = (await ptc(['log', logFile])).stdout.trimEnd().split('\n')
    expect(lines[0]).toMatch(
      /^program call_prog_01 \[turn 1, step 1\] const \[west, east\] = .* — a program the provider ran$/,
    )
    expect(lines.slice(1, 4)).toEqual([
      expect.stringMatching(/^ {2}├─ call_prog_01:ptc:1 query_sales\(\{"region":"west"\}\) — .* — ok /),
      expect.stringMatching(/^ {2}├─ call_prog_01:ptc:2 query_sales\(\{"region":"east"\}\) — .* — ok /),
      expect.stringMatching(/^ {2}└─ call_prog_01:ptc:3 send_report\(.*\) — .* — error DENIED /),
    ])
    expect(lines[5]).toMatch(/^query_sales call_04 \[turn 2, step 1\] \{"region":"central"\} — .* — ok /)
  })
})
