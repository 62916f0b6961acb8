/**
 * Errors a program can act on, over real backends: each program catches one failed sub-call and
 * returns what it observed of the ToolCallError — the stable `code`, the message, the tool's name and
 * `details` — through program -> sandbox -> scheduler -> pipeline -> back.
 */
import type { CodeRuntime } from '@ptc/sandbox'
import { createPtcExecutor } from '@ptc/ptc'
import { sleep } from '@ptc/ptc/testing'
import {
  defineTool,
  MemorySession,
  ToolDeniedError,
  ToolsService,
  type Agent,
  type JsonValue,
  type SessionEvent,
} from '@ptc/tools'
import { installTimeoutPolicy } from '@ptc/tools/timeout'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { backends, runProgram, warmUp } from './backends.js'

/** The deadline of `slow_report`. */
const TIMEOUT_MS = 50

interface Harness {
  readonly tools: ToolsService
  readonly session: MemorySession
  /** Runs one program as the agent's `run_code` call; returns the program's value (fails the test if the run failed). */
  run(code: string): Promise<JsonValue | undefined>
}

/**
 * `get_weather` (no `render`: its value renders as JSON), `refund` (denied by a pre-execute policy),
 * `slow_report` (a 50 ms budget under the timeout policy; waits on its signal), `flaky` (throws),
 * `forged` (throws an error carrying its own `code` and `details`) and `guarded` (throws a
 * `ToolDeniedError`).
 */
function harness(runtime: CodeRuntime): Harness {
  const tools = new ToolsService()
  const none = { schema: { type: 'null' } } as const
  tools.register(
    defineTool({
      name: 'get_weather',
      description: 'Current weather in a city.',
      parameters: { city: { type: 'string', required: true } },
      output: {
        schema: {
          type: 'object',
          additionalProperties: false,
          properties: { city: { type: 'string' }, tempC: { type: 'number' } },
        },
      },
      isConcurrencySafe: () => true,
      execute: async ({ city }) => ({ city, tempC: 21 }),
    }),
  )
  tools.register(
    defineTool({
      name: 'refund',
      description: 'Refund an order.',
      parameters: { orderId: { type: 'string', required: true } },
      output: none,
      execute: async () => null,
    }),
  )
  tools.register(
    defineTool({
      name: 'slow_report',
      description: 'A report that takes too long.',
      parameters: {},
      output: none,
      timeoutMs: TIMEOUT_MS,
      execute: async (_args, ctx) => {
        await sleep(10_000, ctx.signal)
        return null
      },
    }),
  )
  tools.register(
    defineTool({
      name: 'flaky',
      description: 'Fails.',
      parameters: {},
      output: none,
      execute: async () => {
        throw new Error('upstream answered 503')
      },
    }),
  )
  tools.register(
    defineTool({
      name: 'forged',
      description: 'Fails with its own code and details.',
      parameters: {},
      output: none,
      execute: async () => {
        throw Object.assign(new Error('forged failure'), { code: 'DENIED', details: { secret: 'host only' } })
      },
    }),
  )
  tools.register(
    defineTool({
      name: 'guarded',
      description: 'Refuses from inside its body.',
      parameters: {},
      output: none,
      execute: async () => {
        throw new ToolDeniedError('the account is locked')
      },
    }),
  )
  installTimeoutPolicy(tools)
  tools.on('tools/pre-execute', (exec, next) =>
    exec.name === 'refund' ? { kind: 'deny', reason: 'refunds need a human' } : next(),
  )
  tools.setExecutor(createPtcExecutor({ runtime }))
  const session = new MemorySession()
  const agent: Agent = { id: 'agent', session }
  return {
    tools,
    session,
    run: (code) => runProgram(tools, agent, code, 'errors'),
  }
}

/** What a program observes of a caught error; `details` is null when it has none. */
const OBSERVE = `(e: unknown) => {
  const err = e as ToolCallError
  return { isToolCallError: e instanceof ToolCallError, name: err.name, toolName: err.toolName, code: err.code, message: err.message,
    details: 'details' in err ? err.details : null }
}`

/** A program that makes one call and returns what it caught. */
const catching = (call: string): string => `
  const observe = ${OBSERVE}
  try { await ${call}; return 'no error' } catch (e) { return observe(e) }`

const ofType = (events: readonly SessionEvent[], type: string): SessionEvent[] => events.filter((e) => e.type === type)

for (const backend of backends) {
  describe.skipIf(backend.skip !== undefined)(
    `program-visible errors on ${backend.label}${backend.skip === undefined ? '' : ` (skipped: ${backend.skip})`}`,
    () => {
      let runtime: CodeRuntime
      beforeAll(async () => {
        runtime = backend.create()
        await warmUp(runtime)
      })
      afterAll(() => runtime.dispose())

      test('a misspelled tool rejects with UNKNOWN_TOOL naming the closest tool; nothing is dispatched', async () => {
        const h = harness(runtime)
        expect(await h.run(catching('(tools as any).get_wether({ city: "Oslo" })'))).toEqual({
          isToolCallError: true,
          name: 'ToolCallError',
          toolName: 'get_wether',
          code: 'UNKNOWN_TOOL',
          message: 'no tool named "get_wether"; did you mean get_weather?',
          details: null,
        })
        expect(h.session.events.filter((e) => e.type.startsWith('tool/ptc'))).toEqual([])
      })

      test('a program can test for a tool with `in` and fall back, then call the real one', async () => {
        const h = harness(runtime)
        const value = await h.run(`
        const name = 'weather' in tools ? 'weather' : 'get_weather'
        return [typeof (tools as any).weather, 'get_weather' in tools, await (tools as any)[name]({ city: 'Oslo' })]`)
        expect(value).toEqual(['function', true, { city: 'Oslo', tempC: 21 }])
      })

      test('a sub-call denied by a tools/pre-execute policy rejects with DENIED and the policy reason', async () => {
        const h = harness(runtime)
        expect(await h.run(catching('tools.refund({ orderId: "o-1" })'))).toEqual({
          isToolCallError: true,
          name: 'ToolCallError',
          toolName: 'refund',
          code: 'DENIED',
          message: 'refunds need a human',
          details: null,
        })
        const settled = ofType(h.session.events, 'tool/ptc-dispatch')
        expect(settled.map((e) => [e.name, e.isError])).toEqual([['refund', true]])
      })

      test('a tool body past its timeoutMs under installTimeoutPolicy rejects with TOOL_TIMEOUT', async () => {
        const h = harness(runtime)
        expect(await h.run(catching('tools.slow_report()'))).toEqual({
          isToolCallError: true,
          name: 'ToolCallError',
          toolName: 'slow_report',
          code: 'TOOL_TIMEOUT',
          message: `tool call timed out after ${TIMEOUT_MS} ms`,
          details: null,
        })
      })

      test('arguments outside the parameter schema reject with INVALID_ARGS naming the bad path', async () => {
        const h = harness(runtime)
        const observed = (await h.run(catching('tools.get_weather({ city: 42 } as any)'))) as Record<string, JsonValue>
        expect(observed).toMatchObject({
          isToolCallError: true,
          toolName: 'get_weather',
          code: 'INVALID_ARGS',
          details: null,
        })
        expect(observed.message).toMatch(/^invalid arguments: \/city: /)
      })

      test('arguments that are not JSON reject with INVALID_ARGS inside the program, before any dispatch', async () => {
        const h = harness(runtime)
        const observed = (await h.run(
          catching('tools.get_weather({ city: "Oslo", when: new Date() } as any)'),
        )) as Record<string, JsonValue>
        expect(observed).toMatchObject({
          isToolCallError: true,
          toolName: 'get_weather',
          code: 'INVALID_ARGS',
          details: null,
        })
        expect(observed.message).toMatch(/^arguments are not lossless JSON: arguments\.when /)
        expect(h.session.events.filter((e) => e.type.startsWith('tool/ptc'))).toEqual([])
      })

      test('a tool that throws rejects with TOOL_ERROR and its message', async () => {
        const h = harness(runtime)
        expect(await h.run(catching('tools.flaky()'))).toEqual({
          isToolCallError: true,
          name: 'ToolCallError',
          toolName: 'flaky',
          code: 'TOOL_ERROR',
          message: 'upstream answered 503',
          details: null,
        })
      })

      test('a ptc error thrown by a body keeps its code; a plain error cannot forge a code or details', async () => {
        const h = harness(runtime)
        const value = await h.run(`
        const observe = ${OBSERVE}
        const out = []
        for (const name of ['guarded', 'forged'] as const) {
          try { await tools[name](); out.push('no error') } catch (e) { out.push(observe(e)) }
        }
        return out`)
        expect(value).toEqual([
          {
            isToolCallError: true,
            name: 'ToolCallError',
            toolName: 'guarded',
            code: 'DENIED',
            message: 'the account is locked',
            details: null,
          },
          // The pipeline keeps only the message of an error that is not one of ours: its `code` and `details` stay on the host.
          {
            isToolCallError: true,
            name: 'ToolCallError',
            toolName: 'forged',
            code: 'TOOL_ERROR',
            message: 'forged failure',
            details: null,
          },
        ])
      })

      test('a tool without render returns its value to the program and renders JSON in the dispatch log', async () => {
        const h = harness(runtime)
        expect(await h.run('return await tools.get_weather({ city: "Oslo" })')).toEqual({ city: 'Oslo', tempC: 21 })
        const settled = ofType(h.session.events, 'tool/ptc-dispatch')
        expect(settled.map((e) => e.content)).toEqual([
          [{ type: 'text', text: '{\n  "city": "Oslo",\n  "tempC": 21\n}' }],
        ])
      })
    },
  )
}
