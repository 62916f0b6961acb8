/**
 * Long runs through run_code (PtcExecutorOptions.longRuns): a program still running after returnAfterMs
 * goes on in the background and is fetched part by part with { wait }, on every real backend.
 */
import type { CodeRuntime } from '@ptc/sandbox'
import { createPtcExecutor } from '@ptc/ptc'
import { text } from '@ptc/ptc/testing'
import { defineTool, MemorySession, ToolsService, type Agent, type ToolExecutionResult } from '@ptc/tools'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { backends } from './backends.js'

/** A tool that holds each call until the test opens its gate, and says when a call started. */
function gates() {
  const opened = new Map<number, () => void>()
  const started = new Map<number, () => void>()
  const waits = new Map<number, Promise<void>>()
  const startedP = (n: number): Promise<void> => {
    let p = waits.get(n)
    if (p === undefined) {
      p = new Promise<void>((resolve) => started.set(n, resolve))
      waits.set(n, p)
    }
    return p
  }
  const held = new Map<number, Promise<void>>()
  const gate = (n: number): Promise<void> => {
    let p = held.get(n)
    if (p === undefined) {
      p = new Promise<void>((resolve) => opened.set(n, resolve))
      held.set(n, p)
    }
    return p
  }
  const tool = defineTool({
    name: 'gate',
    description: 'Waits until the test opens gate n.',
    parameters: { n: { type: 'integer', required: true } },
    output: { schema: { type: 'integer' }, render: (_a, v) => [{ type: 'text', text: String(v) }] },
    isConcurrencySafe: () => true,
    execute: async ({ n }, ctx) => {
      startedP(n)
      started.get(n)?.()
      await Promise.race([
        gate(n),
        new Promise<void>((resolve) => ctx.signal.addEventListener('abort', () => resolve(), { once: true })),
      ])
      return n
    },
  })
  return { tool, open: (n: number) => (gate(n), opened.get(n)?.()), started: startedP }
}

const PROGRAM = `console.log('part 1')
await tools.gate({ n: 1 })
console.log('part 2')
await tools.gate({ n: 2 })
console.log('part 3')
return 'done'`

for (const backend of backends) {
  describe.skipIf(backend.skip !== undefined)(
    `long runs on ${backend.label}${backend.skip === undefined ? '' : ` (skipped: ${backend.skip})`}`,
    () => {
      let runtime: CodeRuntime
      beforeAll(() => {
        runtime = backend.create()
      })
      afterAll(() => runtime.dispose())

      const setup = (returnAfterMs = 150) => {
        const g = gates()
        const tools = new ToolsService()
        tools.register(g.tool)
        tools.setExecutor(createPtcExecutor({ runtime, longRuns: { returnAfterMs } }))
        const agent: Agent = { id: 'agent', session: new MemorySession() }
        let n = 0
        const call = async (
          args: object,
          who: Agent = agent,
          signal = new AbortController().signal,
        ): Promise<ToolExecutionResult> => {
          const out = await tools.execute({
            calls: [
              {
                type: 'tool_call',
                id: `c${++n}`,
                name: 'run_code',
                arguments: JSON.stringify({ description: 'long', ...args }),
              },
            ],
            signal,
            agent: who,
            log: { turn: 1, step: n },
          })
          return (out.results[0] as { result: ToolExecutionResult }).result
        }
        return { g, tools, agent, call }
      }
      const valueOf = (r: ToolExecutionResult): { logs: string[]; result?: unknown; running?: string } => {
        if (r.isError) throw new Error(text(r))
        return r.value as { logs: string[]; result?: unknown; running?: string }
      }

      test('a long run fetched in three parts: the output so far, the next output, then the rest and the result', async () => {
        const { g, call } = setup()
        // Parts come every returnAfterMs; a part may be empty (a cold engine may not have started the
        // program yet), so each stage fetches parts until its output is there.
        const parts: { logs: string[]; result?: unknown; running?: string }[] = []
        const fetchUntil = async (done: (logs: string[]) => boolean): Promise<string[]> => {
          const logs: string[] = []
          for (let i = 0; !done(logs) && i < 200; i++) {
            const part = valueOf(await call({ wait: 'run-1' }))
            parts.push(part)
            logs.push(...part.logs)
          }
          return logs
        }
        const first = valueOf(await call({ code: PROGRAM }))
        parts.push(first)
        expect(first.running).toBe('run-1')
        // Stage 1: the program waits on gate 1, so no part holds more than its first line.
        expect([...first.logs, ...(await fetchUntil((logs) => [...first.logs, ...logs].includes('part 1')))]).toEqual([
          'part 1',
        ])
        g.open(1)
        await g.started(2)
        // Stage 2: the second line came before the second gate's call started.
        const second = await call({ wait: 'run-1' })
        expect(text(second)).toBe(
          'part 2\n(the program is still running: call run_code with { "wait": "run-1", "description": "…" } for its next output and its result)',
        )
        expect(valueOf(second)).toEqual({ logs: ['part 2'], running: 'run-1' })
        g.open(2)
        // Stage 3: the rest and the result (within one part, or a few on a loaded machine).
        expect(await fetchUntil(() => parts.at(-1)?.running === undefined)).toEqual(['part 3'])
        expect(parts.at(-1)?.result).toBe('done')
        // Returned: the handle is gone.
        const gone = await call({ wait: 'run-1' })
        expect(gone.isError).toBe(true)
        expect(text(gone)).toContain('no running program "run-1"')
      })

      test("the run's limits cover all its parts: a program past its wall fails in the part that sees its end", async () => {
        const { call } = setup(100)
        const first = valueOf(
          await call({ code: 'console.log("waiting")\nawait tools.gate({ n: 9 })', timeoutMs: 600 }),
        )
        expect(first.running).toBe('run-1')
        let last = await call({ wait: 'run-1' })
        for (let i = 0; !last.isError && i < 100; i++) last = await call({ wait: 'run-1' })
        expect(last.isError).toBe(true)
        expect(text(last)).toContain('code run failed (timeout)')
      })

      test('only its agent may wait on a program, one call at a time; bad wait arguments are refused clearly', async () => {
        const { g, call, agent } = setup(100)
        expect(valueOf(await call({ code: PROGRAM })).running).toBe('run-1')
        const stranger = await call({ wait: 'run-1' }, { id: 'other', session: new MemorySession() })
        expect(stranger.isError).toBe(true)
        expect(text(stranger)).toContain('belongs to another agent')
        // Another agent sharing the session log (as ptc serve's client connections do) is a stranger too.
        const sharing = await call(
          { wait: 'run-1' },
          { id: 'other', ...(agent.session !== undefined && { session: agent.session }) },
        )
        expect(sharing.isError).toBe(true)
        expect(text(sharing)).toContain('belongs to another agent')
        const [a, b] = await Promise.all([call({ wait: 'run-1' }), call({ wait: 'run-1' })])
        expect([a, b].filter((r) => r.isError).map((r) => text(r))).toEqual([
          expect.stringContaining('already being waited on'),
        ])
        const both = await call({ wait: 'run-1', code: 'return 1' })
        expect(both.isError).toBe(true)
        expect(text(both)).toContain('/code goes without wait')
        g.open(1)
        g.open(2)
      })

      test('aborting the call before the first part returns stops the program', async () => {
        const { g, call } = setup(60_000)
        const controller = new AbortController()
        const pending = call({ code: PROGRAM }, undefined, controller.signal)
        await g.started(1)
        controller.abort()
        const aborted = await pending
        expect(aborted.isError).toBe(true)
      })

      test('the SDK text and the schema say how long runs work', () => {
        const { tools } = setup(1500)
        const input = tools.modelInput()
        expect(input.sections.map((s) => s.text).join('\n')).toContain(
          'A program still running after 1500 ms keeps running',
        )
        const schema = input.schemas.find((s) => s.name === 'run_code')
        expect(schema?.parameters.required).toEqual(['description'])
        expect(Object.keys(schema?.parameters.properties ?? {})).toContain('wait')
      })
    },
  )
}
