/**
 * What one run writes to the session log of its sub-calls' values is bounded (`logLimits`): a program chooses how
 * many calls it makes and how large their arguments are, and 200 calls with 4 MiB arguments wrote 839 MB of log
 * (and `ptc run` held it all in memory). Values past the bounds keep their head, their weight and their SHA-256;
 * the tools and the model still get every value whole. On every real backend.
 */
import { createHash } from 'node:crypto'
import type { CodeRuntime } from '@ptc/sandbox'
import { createPtcExecutor, type PtcExecutorOptions } from '@ptc/ptc'
import { defineTool, MemorySession, ToolsService, type SessionEvent, type ToolExecutionResult } from '@ptc/tools'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { backends, warmUp } from './backends.js'

const sha = (text: string): string => createHash('sha256').update(text, 'utf8').digest('hex')

const PROGRAM = `
const a = await tools.sink({ text: 'x'.repeat(50000) })
const b = await tools.sink({ text: 'y'.repeat(5000) })
const c = await tools.source({ n: 50000 })
const d = []
for (let i = 0; i < 5; i++) d.push((await tools.sink({ text: 'z'.repeat(5000) })).n)
return [a.n, b.n, c.length, d]`

async function run(
  runtime: CodeRuntime,
  logLimits: PtcExecutorOptions['logLimits'],
): Promise<{ result: ToolExecutionResult; events: readonly SessionEvent[]; received: number[] }> {
  const received: number[] = []
  const tools = new ToolsService()
  tools.register(
    defineTool({
      name: 'sink',
      description: 'Takes a text.',
      parameters: { text: { type: 'string', required: true } },
      output: { schema: { type: 'json' } },
      execute: async ({ text }) => {
        received.push(text.length)
        return { n: text.length }
      },
    }),
  )
  tools.register(
    defineTool({
      name: 'source',
      description: 'Gives a text.',
      parameters: { n: { type: 'number', required: true } },
      output: { schema: { type: 'string' } },
      execute: async ({ n }) => 'w'.repeat(n),
    }),
  )
  tools.setExecutor(createPtcExecutor({ runtime, ...(logLimits !== undefined && { logLimits }) }))
  const session = new MemorySession()
  const batch = await tools.execute({
    calls: [
      {
        type: 'tool_call',
        id: 'run1',
        name: 'run_code',
        arguments: JSON.stringify({ code: PROGRAM, description: 'large values' }),
      },
    ],
    signal: new AbortController().signal,
    agent: { id: 'agent', session },
    log: { turn: 1, step: 1 },
  })
  return { result: (batch.results[0] as { result: ToolExecutionResult }).result, events: session.events, received }
}

for (const backend of backends) {
  describe.skipIf(backend.skip !== undefined)(
    `log limits on ${backend.label}${backend.skip === undefined ? '' : ` (skipped: ${backend.skip})`}`,
    () => {
      let runtime: CodeRuntime
      beforeAll(async () => {
        runtime = backend.create()
        await warmUp(runtime)
      })
      afterAll(async () => {
        await runtime.dispose()
      })

      test('a value past maxValueChars, and every value once the run spent maxRunChars, is logged as its head, weight and SHA-256', async () => {
        const { result, events, received } = await run(runtime, { maxValueChars: 10_000, maxRunChars: 25_000 })
        // The tools and the program got every value whole.
        expect(result.isError).toBe(false)
        expect(received).toEqual([50_000, 5000, 5000, 5000, 5000, 5000, 5000])
        expect(result.content).toEqual([
          { type: 'text', text: JSON.stringify([50_000, 5000, 50_000, [5000, 5000, 5000, 5000, 5000]], null, 2) },
        ])

        const starts = events.filter((e) => e.type === 'tool/ptc-dispatch-start')
        const settles = events.filter((e) => e.type === 'tool/ptc-dispatch')
        expect(starts).toHaveLength(8)
        const big = JSON.stringify({ text: 'x'.repeat(50_000) })
        expect(starts[0]).toMatchObject({
          name: 'sink',
          arguments: `${big.slice(0, 256)}…`,
          elided: { arguments: { bytes: big.length, sha256: sha(big) } },
        })
        expect(starts[1]).toMatchObject({ arguments: { text: 'y'.repeat(5000) } })
        expect(starts[1]?.elided).toBeUndefined()
        // The source's result (its rendered text: the string's JSON, 50 002 characters) is over maxValueChars.
        expect(settles[2]).toMatchObject({
          name: 'source',
          content: [{ type: 'text', text: `"${'w'.repeat(255)}…` }],
          elided: { content: { bytes: 50_002 } },
        })
        // 5 011 characters each: the run had spent 5 011, so three more fit in 25 000 and the last two do not.
        expect(starts.slice(3).map((e) => e.elided === undefined)).toEqual([true, true, true, false, false])
        // Small values are whole whatever was spent.
        expect(settles.slice(3).map((e) => e.content)).toEqual(
          Array(5).fill([{ type: 'text', text: '{\n  "n": 5000\n}' }]),
        )
        const logged = events.reduce((sum, e) => sum + JSON.stringify(e).length, 0)
        expect(logged).toBeLessThan(40_000)
      })

      test('logLimits: false logs every value whole', async () => {
        const { events } = await run(runtime, false)
        const starts = events.filter((e) => e.type === 'tool/ptc-dispatch-start')
        expect(starts[0]).toMatchObject({ arguments: { text: 'x'.repeat(50_000) } })
        expect(events.some((e) => e.elided !== undefined)).toBe(false)
      })

      test('by default (64 Ki per value) the 50 000-character values are logged whole', async () => {
        const { events } = await run(runtime, undefined)
        expect(events.some((e) => e.elided !== undefined)).toBe(false)
      })
    },
  )
}
