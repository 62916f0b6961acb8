import { describe, expect, test } from 'vitest'
import { ToolsService } from '../registry/service.js'
import { defineTool } from '../schema/define-tool.js'
import type { ApprovalRequest } from '../types/approval.js'
import type { ToolExecution } from '../types/tool.js'
import { agent, codeOf, runOne, textOf, tool } from './fixtures/tool.js'

/** A typed tool, a policy that asks approval for every call and an approval service, each recording what it sees. */
function orderDesk(): {
  tools: ToolsService
  seen: { policy: ToolExecution[]; asked: ApprovalRequest[]; ran: number }
} {
  const seen = { policy: [] as ToolExecution[], asked: [] as ApprovalRequest[], ran: 0 }
  const tools = new ToolsService({
    approval: {
      request: (request) => {
        seen.asked.push(request)
        return Promise.resolve('allowed-once')
      },
    },
  })
  tools.register(
    defineTool({
      name: 'order_stock',
      description: 'orders stock',
      parameters: { sku: { type: 'string', required: true }, quantity: { type: 'integer', required: true } },
      output: { schema: { type: 'integer' } },
      execute: async ({ quantity }) => {
        seen.ran++
        return quantity
      },
    }),
  )
  tools.on('tools/pre-execute', (exec) => {
    seen.policy.push(exec)
    return { kind: 'ask', reason: 'orders need approval' }
  })
  return { tools, seen }
}

describe('arguments are checked against the declared parameters before any policy', () => {
  test('a malformed call is INVALID_ARGS: no policy sees it and nobody is asked to approve it', async () => {
    const { tools, seen } = orderDesk()
    const result = await runOne(tools, 'order_stock', { sku: 'apple', quantity: '5' }, { agent: agent('a') })
    expect(codeOf(result)).toBe('INVALID_ARGS')
    expect(result.isError && result.error.info?.name).toBe('ToolArgsError')
    expect(textOf(result)).toMatch(/^Error: invalid arguments: \/quantity: /)
    expect(seen).toEqual({ policy: [], asked: [], ran: 0 })
  })

  test('a valid call goes on to the policy and the approval service', async () => {
    const { tools, seen } = orderDesk()
    const result = await runOne(tools, 'order_stock', { sku: 'apple', quantity: 5 }, { agent: agent('a') })
    expect(result).toMatchObject({ isError: false, value: 5 })
    expect([seen.policy.length, seen.asked.length, seen.ran]).toEqual([1, 1, 1])
  })

  test("a raw tool's declared parameters gate its calls too", async () => {
    const tools = new ToolsService()
    let policies = 0
    tools.register(
      tool('raw', { parameters: { type: 'object', properties: { n: { type: 'number' } }, required: ['n'] } }),
    )
    tools.on('tools/pre-execute', (_exec, next) => {
      policies++
      return next()
    })
    const result = await runOne(tools, 'raw', {})
    expect(codeOf(result)).toBe('INVALID_ARGS')
    expect(textOf(result)).toMatch(/invalid arguments: .*n/)
    expect(policies).toBe(0)
  })

  test('preflight answers allow for malformed arguments without running the policies (the call itself fails)', async () => {
    const { tools, seen } = orderDesk()
    const invalid = await tools.preflight({
      callId: 'c1',
      name: 'order_stock',
      arguments: { sku: 'apple', quantity: '5' },
      agent: agent('a'),
    })
    expect(invalid).toEqual({ kind: 'allow' })
    expect(seen.policy).toEqual([])
    const valid = await tools.preflight({
      callId: 'c2',
      name: 'order_stock',
      arguments: { sku: 'apple', quantity: 5 },
      agent: agent('a'),
    })
    expect(valid).toEqual({ kind: 'ask', reason: 'orders need approval' })
  })
})
