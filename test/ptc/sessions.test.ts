/**
 * Sandbox sessions through run_code: programs of one agent share state, other agents do not, the SDK
 * text says how it works, and what happens to a session the model must know about reaches its text.
 */
import { SESSION_GUIDANCE } from '@ptc/sandbox/session'
import { createIsolatedVmRuntime, isolatedVmAvailability } from '@ptc/sandbox-isolated-vm'
import { createQuickJSRuntime } from '@ptc/sandbox-quickjs'
import { createPtcExecutor } from '@ptc/ptc'
import { ptcHarness, text } from '@ptc/ptc/testing'
import { MemorySession, type Agent, type ToolCallBlock, type ToolExecutionResult } from '@ptc/tools'
import { afterAll, describe, expect, test } from 'vitest'

const isolations = ['worker', 'inline'] as const

describe.each(isolations)('run_code sessions on QuickJS (%s)', (isolation) => {
  const runtime = createQuickJSRuntime({ isolation, poolSize: 2, sessions: { maxSessionBytes: 2_000_000 } })
  afterAll(() => runtime.dispose())

  test("one agent's programs share top-level declarations and globals; sub-calls go through the pipeline", async () => {
    const h = ptcHarness(runtime, { sessions: true })
    const first = await h.runCode(`
      const seen: Record<string, number> = {}
      async function remember(key: string) { seen[key] = (await tools.lookup({ key })).value; return seen[key] }
      await remember('alpha')
      return Object.keys(seen)
    `)
    expect(first.isError).toBe(false)
    expect(text(first)).toBe('[\n  "alpha"\n]')
    const second = await h.runCode(`await remember('be'); return seen`)
    expect(text(second)).toBe('{\n  "alpha": 5,\n  "be": 2\n}')
    expect(h.trace).toEqual(['start alpha', 'end alpha', 'start be', 'end be'])
    // Both sub-calls were logged as parented dispatches of their own run_code call.
    const parents = h.session.events.filter((e) => e.type === 'tool/ptc-dispatch').map((e) => e.parentCallId)
    expect(parents).toEqual(['run1', 'run2'])
  })

  test('another agent (another session) sees none of it; sessions off, nothing is kept', async () => {
    const a = ptcHarness(runtime, { sessions: true })
    const b = ptcHarness(runtime, { sessions: true })
    await a.runCode('const secret = "only a"; return 1')
    expect(text(await a.runCode('return secret'))).toBe('only a')
    expect(text(await b.runCode('return typeof secret'))).toBe('undefined')
    const off = ptcHarness(runtime)
    await off.runCode('const kept = 1; globalThis.g = 2; return 1')
    expect(text(await off.runCode('return [typeof kept, typeof g]'))).toBe('[\n  "undefined",\n  "undefined"\n]')
  })

  test('the SDK text carries the session guidance only when sessions are on', () => {
    const on = ptcHarness(runtime, { sessions: true })
      .tools.modelInput()
      .sections.map((s) => s.text)
      .join('\n')
    const off = ptcHarness(runtime)
      .tools.modelInput()
      .sections.map((s) => s.text)
      .join('\n')
    expect(on).toContain(SESSION_GUIDANCE)
    expect(off).not.toContain(SESSION_GUIDANCE)
  })

  test('a key function chooses the session per call; undefined runs without one', async () => {
    let key: string | undefined = `custom-${isolation}`
    const h = ptcHarness(runtime, { sessions: { key: () => key } })
    await h.runCode('var counter = 41')
    expect(text(await h.runCode('return ++counter'))).toBe('42')
    key = undefined
    expect(text(await h.runCode('return typeof counter'))).toBe('undefined')
    key = ''
    const bad = await h.runCode('return 1')
    expect(bad.isError).toBe(true)
    expect(text(bad)).toContain('a session key is a non-empty string')
  })

  test("a run whose state is over the session's budget says so, and the session keeps its state from before", async () => {
    const h = ptcHarness(runtime, { sessions: true })
    await h.runCode('const small = "kept"')
    const big = await h.runCode('globalThis.big = "x".repeat(4_000_000); return small')
    expect(big.isError).toBe(false)
    expect(text(big)).toMatch(
      /^\[sandbox session: the run left \d+ bytes of state, over the session's budget of 2000000 \(maxSessionBytes\); the session keeps its state from before the run\]\nkept$/,
    )
    expect(text(await h.runCode('return [small, typeof big]'))).toBe('[\n  "kept",\n  "undefined"\n]')
  })

  test('a failed program keeps what it declared before failing; the failure text is the usual one', async () => {
    const h = ptcHarness(runtime, { sessions: true })
    const failed = await h.runCode('const before = 7\nthrow new Error("late")')
    expect(failed.isError).toBe(true)
    expect(text(failed)).toContain('code run failed (exception): Error: late (line 2')
    expect(text(await h.runCode('return before'))).toBe('7')
  })

  test('calls of one agent in one batch share the session one at a time: the second waits its turn or says why', async () => {
    const tools = ptcHarness(runtime, { sessions: true }).tools
    const session = new MemorySession()
    const agent: Agent = { id: 'agent', session }
    const call = (id: string, code: string): ToolCallBlock => ({
      type: 'tool_call',
      id,
      name: 'run_code',
      arguments: JSON.stringify({ code, description: id }),
    })
    const out = await tools.execute({
      calls: [call('a', 'globalThis.n = 1; return n'), call('b', 'return typeof n')],
      signal: new AbortController().signal,
      agent,
      log: { turn: 1, step: 1 },
    })
    const texts = out.results.map((r) => text((r as { result: ToolExecutionResult }).result))
    // run_code is exclusive by default: the two programs ran one after the other, on one session.
    expect(texts).toEqual(['1', 'number'])
  })
})

const ivm = isolatedVmAvailability()
describe.skipIf(!ivm.available)(
  `run_code sessions on isolated-vm${ivm.available ? '' : ` (skipped: ${ivm.reason})`}`,
  () => {
    test("createPtcExecutor takes sessions on isolated-vm, and one agent's run_code calls share state", async () => {
      const runtime = createIsolatedVmRuntime({ processes: 1 })
      try {
        expect(() => createPtcExecutor({ runtime, sessions: true })).not.toThrow()
        const h = ptcHarness(runtime, { sessions: true })
        const first = await h.runCode(
          'const seen: string[] = []\nseen.push((await tools.lookup({ key: "alpha" })).value + "")\nreturn seen.length',
        )
        expect(first.isError).toBe(false)
        expect(text(first)).toBe('1')
        expect(text(await h.runCode('seen.push("more"); return seen'))).toBe('[\n  "5",\n  "more"\n]')
        expect(text(await ptcHarness(runtime, { sessions: true }).runCode('return typeof seen'))).toBe('undefined')
      } finally {
        await runtime.dispose()
      }
    })
  },
)
