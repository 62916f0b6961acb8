/**
 * run_code end to end over real backends: program -> sandbox -> scheduler ->
 * pipeline -> tool -> back. The bridge's finer scheduling rules are tested
 * over a fake runtime in packages/ptc; here each behaviour is shown on a real isolate.
 */
import type { CodeRuntime } from '@ptc/sandbox'
import { ptcHarness, sleep, text, type PtcHarness } from '@ptc/ptc/testing'
import { defineTool } from '@ptc/tools'
import { installTimeoutPolicy } from '@ptc/tools/timeout'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { backends } from './backends.js'

for (const backend of backends) {
  describe.skipIf(backend.skip !== undefined)(
    `run_code on ${backend.label}${backend.skip === undefined ? '' : ` (skipped: ${backend.skip})`}`,
    () => {
      let runtime: CodeRuntime
      let h: PtcHarness
      beforeAll(() => {
        runtime = backend.create()
      })
      afterAll(() => runtime.dispose())
      const harness = (options?: Parameters<typeof ptcHarness>[1]): PtcHarness => (h = ptcHarness(runtime, options))

      test('a TypeScript program calls tools sequentially and with Promise.all; the model sees logs and the value', async () => {
        harness()
        const result = await h.runCode(`
        const first: { key: string; value: number } = await tools.lookup({ key: 'alpha' })
        console.log('first', first.value)
        const all = await Promise.all(['a', 'bb', 'ccc'].map((key) => tools.lookup({ key })))
        return all.map((r) => r.value)
      `)
        expect(result.isError).toBe(false)
        expect(text(result)).toBe('first 5\n[\n  1,\n  2,\n  3\n]')
        const starts = h.session.events.filter((e) => e.type === 'tool/ptc-dispatch-start')
        expect(starts.map((e) => e.subCallId)).toEqual(['run1:ptc:1', 'run1:ptc:2', 'run1:ptc:3', 'run1:ptc:4'])
        expect(h.session.events.filter((e) => e.type === 'tool/ptc-dispatch')).toHaveLength(4)
      })

      test('no output gives the fixed marker; a string result is raw', async () => {
        harness()
        expect(text(await h.runCode('await tools.lookup({ key: "x" })'))).toBe('(run_code completed with no output)')
        expect(text(await h.runCode('return "plain text"'))).toBe('plain text')
      })

      test('a non-JSON argument rejects that call in the program, with no dispatch and no events', async () => {
        harness()
        const result = await h.runCode(`
        const bad = [{ key: 'x', when: new Date() }, { key: undefined }, { key: 1n }, (() => { const o: any = { key: 'c' }; o.self = o; return o })()]
        const outcomes = []
        for (const args of bad) {
          try { await tools.lookup(args as any); outcomes.push('called') } catch (e) { outcomes.push(e instanceof ToolCallError ? 'ToolCallError' : String(e)) }
        }
        return outcomes
      `)
        expect(result.isError === false && result.value).toEqual({
          logs: [],
          result: ['ToolCallError', 'ToolCallError', 'ToolCallError', 'ToolCallError'],
        })
        expect(h.session.events.filter((e) => e.type.startsWith('tool/ptc'))).toEqual([])
        expect(h.trace).toEqual([])
      })

      test('deep arguments cross intact', async () => {
        harness()
        let depth = 0
        h.tools.on('tools/pre-execute', (exec, next) => {
          if (exec.name === 'lookup')
            for (let v: unknown = (exec.arguments as { nested?: unknown }).nested; Array.isArray(v); v = v[0]) depth++
          return next()
        })
        const result = await h.runCode(`
        let nested: unknown = []
        for (let i = 0; i < 500; i++) nested = [nested]
        return (await tools.lookup({ key: 'deep', nested } as any)).value
      `)
        expect(text(result)).toBe('4')
        expect(depth).toBe(501)
      })

      test('a pre-execute deny and a throwing pre-execute listener reject only that call; the program catches them', async () => {
        harness()
        h.tools.on('tools/pre-execute', (exec, next) => {
          const key = (exec.arguments as { key?: string }).key
          if (key === 'denied') return { kind: 'deny', reason: 'not for you' }
          if (key === 'boom') throw new Error('policy bug')
          return next()
        })
        const result = await h.runCode(`
        const out = []
        for (const key of ['denied', 'boom', 'fine']) {
          try { out.push((await tools.lookup({ key })).value) } catch (e) { out.push((e as ToolCallError).toolName + ': ' + (e as Error).message) }
        }
        return out
      `)
        expect(result.isError === false && result.value).toEqual({
          logs: [],
          result: ['lookup: not for you', 'lookup: a tools/pre-execute listener failed: policy bug', 4],
        })
      })

      test('a program tells failures apart by ToolCallError.code: DENIED, TOOL_TIMEOUT, TOOL_ERROR, INVALID_ARGS', async () => {
        harness()
        installTimeoutPolicy(h.tools)
        h.tools.register(
          defineTool({
            name: 'flaky',
            description: 'Fails on purpose.',
            parameters: { how: { type: 'string', required: true } },
            output: { schema: { type: 'null' }, render: () => [] },
            timeoutMs: 50,
            execute: async ({ how }, ctx) => {
              if (how === 'slow') await sleep(5_000, ctx.signal)
              throw new Error(`failed: ${how}`)
            },
          }),
        )
        h.tools.on('tools/pre-execute', (exec, next) =>
          (exec.arguments as { how?: string }).how === 'deny' ? { kind: 'deny', reason: 'not allowed' } : next(),
        )
        const result = await h.runCode(`
        const out: string[] = []
        for (const how of ['deny', 'slow', 'throw']) {
          try { await tools.flaky({ how }) } catch (e) { out.push((e as ToolCallError).code) }
        }
        try { await tools.lookup({ key: 1 as any }) } catch (e) { out.push((e as ToolCallError).code) }
        try { await tools.flaky({ how: () => 1 } as any) } catch (e) { out.push((e as ToolCallError).code) }
        return out
      `)
        expect(result.isError === false && result.value).toEqual({
          logs: [],
          result: ['DENIED', 'TOOL_TIMEOUT', 'TOOL_ERROR', 'INVALID_ARGS', 'INVALID_ARGS'],
        })
      })

      test('a post-execute value replacement reaches the program', async () => {
        harness()
        h.tools.on('tools/post-execute', (exec, _r, next) =>
          exec.name === 'lookup' ? { kind: 'accept', value: { key: 'swapped', value: 99 } } : next(),
        )
        expect(text(await h.runCode('return (await tools.lookup({ key: "a" })).key'))).toBe('swapped')
      })

      test('an ask on a sub-call goes to the approval service while the program waits; only allowed-once proceeds', async () => {
        const asked: string[] = []
        harness({
          approval: {
            request: async ({ exec, reason }) => {
              asked.push(`${exec.name} ${JSON.stringify(exec.arguments)} ${reason ?? ''}`)
              await sleep(50) // the user thinks; the program is waiting
              return (exec.arguments as { key: string }).key === 'ok' ? 'allowed-once' : 'rejected'
            },
          },
        })
        h.tools.on('tools/pre-execute', (exec, next) =>
          exec.name === 'write' ? { kind: 'ask', reason: 'writes need approval' } : next(),
        )
        const result = await h.runCode(`
        const a = await tools.write({ key: 'ok' })
        const b = await tools.write({ key: 'no' }).catch((e) => 'refused: ' + e.message)
        return [a.written, b]
      `)
        expect(result.isError === false && result.value).toEqual({
          logs: [],
          result: ['ok', 'refused: the approval service rejected this call (writes need approval)'],
        })
        expect(asked).toEqual(['write {"key":"ok"} writes need approval', 'write {"key":"no"} writes need approval'])
        expect(h.trace).toEqual(['start write ok', 'end write ok'])
      })

      test('an outer abort stops the program: in-flight sub-calls aborted, code run failed (abort)', async () => {
        harness()
        const controller = new AbortController()
        // Aborted once the sub-call is running (not after a fixed delay: a cold engine may not have started it yet).
        const watch = setInterval(() => {
          if (h.trace.includes('start slow')) controller.abort()
        }, 5)
        const started = Date.now()
        const result = await h.runCode('await tools.lookup({ key: "slow", delayMs: 10000 }); return "unreachable"', {
          signal: controller.signal,
        })
        clearInterval(watch)
        expect(Date.now() - started).toBeLessThan(3_000)
        expect(text(result)).toMatch(/^Error: code run failed \(abort\)/)
        expect(h.trace).toEqual(['start slow'])
        const settled = h.session.events.filter((e) => e.type === 'tool/ptc-dispatch')
        expect(settled).toHaveLength(1)
        expect(settled[0]).toMatchObject({ isError: true })
      })

      test('a program that throws after sub-calls started still drains and logs them, and reports the line', async () => {
        harness()
        // The awaited call forces a host round trip, so the background call has surely started.
        const result = await h.runCode(`tools.lookup({ key: 'bg', delayMs: 50 }).catch(() => {})
await tools.lookup({ key: 'quick' })
throw new Error('broken on purpose')`)
        expect(text(result)).toMatch(/^Error: code run failed \(exception\): .*broken on purpose/)
        expect(text(result)).toMatch(/line 3/)
        const types = h.session.events.map((e) => e.type)
        expect(types.filter((t) => t === 'tool/ptc-dispatch-start')).toHaveLength(2)
        expect(types.filter((t) => t === 'tool/ptc-dispatch')).toHaveLength(2)
        expect(h.trace).toContain('start bg')
        expect(types.lastIndexOf('tool/ptc-dispatch')).toBeLessThan(types.lastIndexOf('tool/result'))
      })

      test('the run_code timeoutMs argument bounds the program', async () => {
        harness()
        const started = Date.now()
        const result = await h.runCode('while (true) {}', { timeoutMs: 300 })
        expect(text(result)).toMatch(/^Error: code run failed \(timeout\)/)
        expect(Date.now() - started).toBeLessThan(5_000)
      })

      test('fan-out: 40 calls of a 20 ms tool with cap 10 overlap, never more than 10 at a time', async () => {
        harness({ maxParallelSubCalls: 10 })
        const result = await h.runCode(
          'return (await Promise.all(Array.from({ length: 40 }, (_, i) => tools.lookup({ key: "k" + i, delayMs: 20 })))).length',
        )
        expect(text(result)).toBe('40')
        // The tool bodies' own trace: how many had started and not ended at each point (was a time bound, which a
        // loaded machine broke, and which a run of the calls one after another would have met).
        let running = 0
        let most = 0
        for (const step of h.trace) {
          running += step.startsWith('start ') ? 1 : -1
          most = Math.max(most, running)
        }
        expect(h.trace.filter((step) => step.startsWith('end '))).toHaveLength(40)
        expect(most).toBeGreaterThan(1)
        expect(most).toBeLessThanOrEqual(10)
      })
    },
  )
}
