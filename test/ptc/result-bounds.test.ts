/**
 * How long a tool result a program receives, and how long arguments it may pass, over real backends:
 * `limits.maxResultChars` bounds the JSON text of one sub-call's value, `limits.maxArgumentChars` that of
 * its arguments (refused before the host parses them). The pipeline refuses a value as soon as its copy has counted past it (a
 * lower bound: strings, keys, brackets, one digit a number), before it is validated, rendered or logged;
 * the sandbox checks the exact text before it sends it. A refused call rejects inside the program, which
 * goes on. Measured before the bound: a tool that returned a 200 MB string held the host thread 12 s past
 * a 3 s wall, and one that returned an array nesting `[a, a]` 26 times ended the host process.
 */
import type { CodeRunLimits, CodeRuntime } from '@ptc/sandbox'
import { createPtcExecutor } from '@ptc/ptc'
import { defineTool, MemorySession, ToolsService, type Agent, type JsonValue, type SessionEvent } from '@ptc/tools'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { backends, runProgram, warmUp } from './backends.js'

/** The bound the bounded harness runs with. */
const MAX = 1000

interface Harness {
  /** The session's events so far. */
  events(): readonly SessionEvent[]
  /** How often `text`'s renderer ran. */
  renders(): number
  /** How often `take` ran. */
  takes(): number
  /** Runs one program as the agent's `run_code` call; returns its value (fails the test if the run failed). */
  run(code: string): Promise<JsonValue | undefined>
}

/** An array nesting `[a, a]` `levels` times around one string: small in memory, 2^levels copies as text. */
const DOUBLING = `(levels) => { let a = ['leaf']; for (let i = 0; i < levels; i++) a = [a, a]; return a }`

/**
 * `text({ n })`: n characters (rendered by a counting renderer); `numbers({ n })`: n nine-digit numbers
 * (their text is longer than the pipeline's count); `doubling({ levels })`: a shared-node graph;
 * `take({ s })`: the length of the string it was given.
 */
function harness(runtime: CodeRuntime, limits?: Partial<CodeRunLimits>): Harness {
  const tools = new ToolsService()
  let renders = 0
  let takes = 0
  const n = { n: { type: 'integer', required: true } } as const
  tools.register(
    defineTool({
      name: 'text',
      description: 'n characters',
      parameters: n,
      output: {
        schema: { type: 'string' },
        render: (_args, value) => {
          renders++
          return [{ type: 'text', text: `${value.length} characters` }]
        },
      },
      execute: async ({ n: count }) => 'x'.repeat(count),
    }),
  )
  tools.register(
    defineTool({
      name: 'numbers',
      description: 'n nine-digit numbers',
      parameters: n,
      output: { schema: { type: 'json' } },
      execute: async ({ n: count }) => Array.from({ length: count }, () => 123_456_789),
    }),
  )
  const doubling = new Function(`return ${DOUBLING}`)() as (levels: number) => JsonValue
  tools.register(
    defineTool({
      name: 'doubling',
      description: 'a graph that shares its nodes',
      parameters: { levels: { type: 'integer', required: true } },
      output: { schema: { type: 'json' } },
      execute: async ({ levels }) => doubling(levels),
    }),
  )
  tools.register(
    defineTool({
      name: 'take',
      description: 'the length of s',
      parameters: { s: { type: 'string', required: true } },
      output: { schema: { type: 'integer' } },
      execute: async ({ s }) => {
        takes++
        return s.length
      },
    }),
  )
  tools.setExecutor(createPtcExecutor({ runtime, ...(limits !== undefined && { limits }) }))
  const session = new MemorySession()
  const agent: Agent = { id: 'agent', session }
  return {
    events: () => session.events,
    renders: () => renders,
    takes: () => takes,
    run: (code) => runProgram(tools, agent, code, 'bounds'),
  }
}

/** A program that makes one call and returns what it got: the value's length, or the rejection's code and message. */
const attempt = (call: string): string => `
  try { const v = await ${call}; return { length: JSON.stringify(v).length } }
  catch (e) { const err = e as ToolCallError; return { code: err.code, message: err.message } }`

for (const backend of backends) {
  describe.skipIf(backend.skip !== undefined)(
    `tool results and maxResultChars on ${backend.label}${backend.skip === undefined ? '' : ` (skipped: ${backend.skip})`}`,
    () => {
      let runtime: CodeRuntime
      beforeAll(async () => {
        runtime = backend.create()
        await warmUp(runtime)
      })
      afterAll(() => runtime.dispose())

      test('a result whose JSON text is exactly the bound arrives; one character more is refused before it is rendered', async () => {
        const h = harness(runtime, { maxResultChars: MAX })
        expect(await h.run(attempt(`tools.text({ n: ${MAX - 2} })`))).toEqual({ length: MAX })
        expect(h.renders()).toBe(1)
        expect(await h.run(attempt(`tools.text({ n: ${MAX - 1} })`))).toEqual({
          code: 'INVALID_TOOL_OUTPUT',
          message: `tool text returned a value too long to take: its JSON text is at least ${MAX + 1} characters, more than the ${MAX} this accepts`,
        })
        expect(h.renders()).toBe(1)
        const settled = h.events().filter((e) => e.type === 'tool/ptc-dispatch')
        expect(settled.map((e) => e.isError)).toEqual([false, true])
      })

      test('a result the pipeline counts short of the bound but whose exact text is longer is refused by the sandbox, naming the limit', async () => {
        const h = harness(runtime, { maxResultChars: MAX })
        // 150 numbers: counted 301 characters (one digit each), written 1 501.
        const got = (await h.run(attempt('tools.numbers({ n: 150 })'))) as { code: string; message: string }
        expect(got.message).toBe(
          `the tool result is 1501 characters of JSON, more than the ${MAX} a sub-call may return (the maxResultChars limit)`,
        )
        expect(await h.run(attempt('tools.numbers({ n: 90 })'))).toEqual({ length: 90 * 10 + 1 })
      })

      test('under the default bound a graph whose text would be 2^40 copies fails its call at once; the program goes on, the host lives', async () => {
        const h = harness(runtime, undefined)
        const got = (await h.run(`
        const out = []
        try { await tools.doubling({ levels: 40 }); out.push('no error') } catch (e) { out.push((e as ToolCallError).code, (e as ToolCallError).message) }
        out.push((await tools.text({ n: 3 })).length)
        return out`)) as [string, string, number]
        expect(got[0]).toBe('INVALID_TOOL_OUTPUT')
        expect(got[1]).toMatch(
          new RegExp(
            `^tool doubling returned a value too long to take: its JSON text is at least \\d+ characters, more than the ${runtime.limits.maxResultChars} this accepts$`,
          ),
        )
        expect(got[2]).toBe(3)
      })

      test('the default bound is 16 Mi characters: a 16 Mi string of text is refused without being sent', async () => {
        const h = harness(runtime, undefined)
        expect(runtime.limits.maxResultChars).toBe(16 * 1024 * 1024)
        expect(await h.run(attempt(`tools.text({ n: ${16 * 1024 * 1024} })`))).toMatchObject({
          code: 'INVALID_TOOL_OUTPUT',
        })
        expect(h.renders()).toBe(0)
      })

      test('arguments whose JSON text is exactly maxArgumentChars reach the tool; one character more reject their call unparsed, and the program goes on', async () => {
        const h = harness(runtime, { maxArgumentChars: MAX })
        // {"s":"…"}: the string and 8 characters.
        const got = await h.run(`
        const out = []
        for (const n of [${MAX - 8}, ${MAX - 7}]) {
          try { out.push(await tools.take({ s: 'y'.repeat(n) })) } catch (e) { out.push([(e as ToolCallError).code, (e as ToolCallError).message]) }
        }
        out.push(await tools.take({ s: 'after' }))
        return out`)
        expect(got).toEqual([
          MAX - 8,
          [
            'INVALID_ARGS',
            `the arguments are ${MAX + 1} characters of JSON, more than the ${MAX} a sub-call may pass (the maxArgumentChars limit)`,
          ],
          5,
        ])
        expect(h.takes()).toBe(2)
        // The refused call never reached the pipeline: two dispatches logged, both of them answered.
        expect(
          h
            .events()
            .filter((e) => e.type === 'tool/ptc-dispatch')
            .map((e) => e.isError),
        ).toEqual([false, false])
      })

      test('the default argument bound is 16 Mi characters', async () => {
        const h = harness(runtime)
        expect(runtime.limits.maxArgumentChars).toBe(16 * 1024 * 1024)
        const got = await h.run(
          `try { await tools.take({ s: 'z'.repeat(${16 * 1024 * 1024}) }); return 'taken' } catch (e) { return (e as ToolCallError).code }`,
        )
        expect(got).toBe('INVALID_ARGS')
        expect(h.takes()).toBe(0)
      })
    },
  )
}
