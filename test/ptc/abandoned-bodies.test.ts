/**
 * A tool whose body ignores its abort signal cannot be stopped: the scheduler abandons the call after its
 * drain grace, and the body goes on holding its arguments and closures. Programs could leave such bodies
 * behind without end (10 000 a run); at most `MAX_ABANDONED_BODIES` of one tool may be running abandoned,
 * past that its calls fail at once, and they start again once the stuck bodies end. Over real backends.
 */
import type { CodeRuntime } from '@ptc/sandbox'
import { createPtcExecutor, MAX_ABANDONED_BODIES } from '@ptc/ptc'
import { defineTool, MemorySession, ToolsService, type Agent, type JsonValue } from '@ptc/tools'
import { installTimeoutPolicy } from '@ptc/tools/timeout'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { backends, runProgram, warmUp } from './backends.js'

/** The calls the program makes: more than the cap, in rounds under the pending-call cap (256). */
const CALLS = 300

for (const backend of backends) {
  describe.skipIf(backend.skip !== undefined)(
    `abandoned tool bodies on ${backend.label}${backend.skip === undefined ? '' : ` (skipped: ${backend.skip})`}`,
    () => {
      let runtime: CodeRuntime
      beforeAll(async () => {
        runtime = backend.create()
        await warmUp(runtime)
      })
      afterAll(() => runtime.dispose())

      test(`past ${MAX_ABANDONED_BODIES} stuck bodies of a tool its calls fail at once; once they end, it is called again`, async () => {
        const tools = new ToolsService()
        let started = 0
        let hanging = true
        const release: (() => void)[] = []
        tools.register(
          defineTool({
            name: 'stuck',
            description: 'Ignores its abort signal while `hanging`.',
            parameters: {},
            output: { schema: { type: 'string' } },
            isConcurrencySafe: () => true,
            timeoutMs: 5,
            execute: async () => {
              started++
              if (hanging) await new Promise<void>((resolve) => release.push(resolve))
              return 'done'
            },
          }),
        )
        installTimeoutPolicy(tools)
        tools.setExecutor(createPtcExecutor({ runtime, drainGraceMs: 5, limits: { wallMs: 60_000 } }))
        const session = new MemorySession()
        const agent: Agent = { id: 'agent', session }
        const run = (code: string): Promise<JsonValue | undefined> => runProgram(tools, agent, code, 'stuck bodies')

        const outcomes = (await run(`
        const codes: Record<string, number> = {}
        let refusal = ''
        for (let round = 0; round < 6; round++) {
          await Promise.all(Array.from({ length: 50 }, () => tools.stuck().then(
            () => { codes.ok = (codes.ok ?? 0) + 1 },
            (e) => { const err = e as ToolCallError; codes[err.code] = (codes[err.code] ?? 0) + 1; if (err.code === 'TOOL_ERROR') refusal = err.message })))
        }
        return { codes, refusal }`)) as { codes: Record<string, number>; refusal: string }
        // The cap is checked as a call starts: the calls already running when it was reached (at most the
        // 10 parallel ones of this program) are abandoned too.
        expect(started).toBeGreaterThanOrEqual(MAX_ABANDONED_BODIES)
        expect(started).toBeLessThan(MAX_ABANDONED_BODIES + 10)
        expect(outcomes.codes).toEqual({ TOOL_TIMEOUT: started, TOOL_ERROR: CALLS - started })
        const [count, ...words] = outcomes.refusal.split(' ')
        expect(Number(count)).toBeGreaterThanOrEqual(MAX_ABANDONED_BODIES)
        expect(Number(count)).toBeLessThanOrEqual(started)
        expect(words.join(' ')).toBe(
          'earlier calls of stuck were abandoned and are still running (its body does not stop when told to); no call of it starts until some of them end',
        )

        // The bodies end: their late outcomes are logged, and the tool is called again.
        hanging = false
        for (const resolve of release.splice(0)) resolve()
        await new Promise((resolve) => setImmediate(resolve))
        const before = started
        expect(await run('return await tools.stuck()')).toBe('done')
        expect(started).toBe(before + 1)
        expect(session.events.filter((e) => e.type === 'tool/ptc-dispatch-late')).toHaveLength(before)
      })
    },
  )
}
