/**
 * Durable runs on QuickJS (both isolations): a run whose host parks a call suspends once the program
 * waits on nothing else; `openRun` + `resumeRun` continue it where it waited, with its limits carried
 * over; sealed state that is tampered with, truncated or bound to another key is refused.
 */
import { afterAll, describe, expect, test } from 'vitest'
import { SandboxUsageError, type CodeRunRequest, type CodeRuntime, type JsonValue } from '@ptc/sandbox'
import { parkCall, SnapshotError } from '@ptc/sandbox/session'
import { createQuickJSRuntime } from './index.js'

const secret = 'durable-test-secret-0123456789abcdef'

describe.each(['worker', 'inline'] as const)('durable runs (%s)', (isolation) => {
  const runtime = createQuickJSRuntime({ isolation, poolSize: 2, secret })
  afterAll(() => runtime.dispose())

  /** A host whose `ask` calls park and whose other calls answer `{ n: n * 10 }`. */
  const parking = (extra: Partial<CodeRunRequest> = {}): Omit<CodeRunRequest, 'code'> => ({
    bindings: ['read', 'ask'],
    call: async (name, args) => {
      if (name === 'ask') throw parkCall({ asked: args })
      return { n: (args as { n: number }).n * 10 }
    },
    durable: { key: 'run-1', data: () => ({ mine: true }) },
    ...extra,
  })

  async function resume(
    rt: CodeRuntime,
    state: Uint8Array,
    answer: (name: string, args: JsonValue) => Promise<JsonValue>,
    key = 'run-1',
  ) {
    const opened = await (rt.openRun as NonNullable<CodeRuntime['openRun']>)(key, state)
    return { opened, result: await (rt.resumeRun as NonNullable<CodeRuntime['resumeRun']>)(opened, { call: answer }) }
  }

  test('suspends on a parked call and goes on where it waited, with what it held', async () => {
    const code =
      'const m = new Map([["a", 1]]); const r = await tools.read({ n: 2 }); console.log("before", r.n)\n' +
      'const yes = await tools.ask({ q: "ok?" }); m.set("b", yes); console.log("after"); return [...m, r.n]'
    const first = await runtime.run({ code, ...parking() })
    expect(first.error).toBeUndefined()
    expect(first.value).toBeUndefined()
    expect(first.logs).toEqual(['before 20'])
    expect(first.suspended?.parked).toEqual([{ name: 'ask', args: { q: 'ok?' }, detail: { asked: { q: 'ok?' } } }])
    const calls: string[] = []
    const { opened, result } = await resume(runtime, first.suspended?.state as Uint8Array, async (name, args) => {
      calls.push(`${name} ${JSON.stringify(args)}`)
      return 'granted'
    })
    expect(opened).toMatchObject({ key: 'run-1', data: { mine: true }, logs: ['before 20'] })
    expect(calls).toEqual(['ask {"q":"ok?"}'])
    expect(result.error).toBeUndefined()
    expect(result.logs).toEqual(['after'])
    expect(result.value).toEqual([['a', 1], ['b', 'granted'], 20])
    expect(result.stats.subCalls).toBe(2)
  })

  test('a rejection on resume throws ToolCallError with its code where the program waited', async () => {
    const code =
      'try { await tools.ask({}) } catch (e) { return [e.name, e.code, e.message, e instanceof ToolCallError] }'
    const first = await runtime.run({ code, ...parking() })
    const { result } = await resume(runtime, first.suspended?.state as Uint8Array, async () => {
      throw Object.assign(new Error('the user rejected this call'), { code: 'DENIED' })
    })
    expect(result.value).toEqual(['ToolCallError', 'DENIED', 'the user rejected this call', true])
  })

  test('waits for the calls still in flight before it suspends, and parks several calls at once', async () => {
    let open!: () => void
    const gate = new Promise<void>((resolve) => (open = resolve))
    let slowDone = false
    const request = parking({
      call: async (name, args) => {
        if (name === 'ask') throw parkCall()
        await gate
        slowDone = true
        return { n: (args as { n: number }).n * 10 }
      },
    })
    const code =
      'const r = await Promise.allSettled([tools.ask({ i: 1 }), tools.read({ n: 1 }), tools.ask({ i: 2 })]); return r.map((x) => x.status + ":" + JSON.stringify(x.value ?? x.reason.code))'
    const pending = runtime.run({ code, ...request })
    let settled = false
    void pending.then(() => (settled = true))
    await new Promise((resolve) => setTimeout(resolve, 50))
    expect(settled).toBe(false)
    open()
    const first = await pending
    expect(slowDone).toBe(true)
    expect(first.suspended?.parked.map((p) => p.args)).toEqual([{ i: 1 }, { i: 2 }])
    const order: JsonValue[] = []
    const { result } = await resume(runtime, first.suspended?.state as Uint8Array, async (_name, args) => {
      order.push(args)
      if ((args as { i: number }).i === 2) throw Object.assign(new Error('no'), { code: 'DENIED' })
      return 'yes'
    })
    expect(order).toEqual([{ i: 1 }, { i: 2 }])
    expect(result.value).toEqual(['fulfilled:"yes"', 'fulfilled:{"n":10}', 'rejected:"DENIED"'])
  })

  test('a program that returns without awaiting its parked call ends as usual', async () => {
    const result = await runtime.run({ code: 'tools.ask({}).catch(() => {}); return 7', ...parking() })
    expect(result).toMatchObject({ value: 7 })
    expect(result.suspended).toBeUndefined()
  })

  test('in a run that is not durable, a parked call is an ordinary rejection', async () => {
    const { durable: _durable, ...plain } = parking()
    const result = await runtime.run({ code: 'try { await tools.ask({}) } catch (e) { return e.message }', ...plain })
    expect(result.value).toMatch(/cannot suspend/)
  })

  test('parks again after a resume: each suspension under its own key', async () => {
    const code = 'const a = await tools.ask({ i: 1 }); const b = await tools.ask({ i: 2 }); return a + b'
    const first = await runtime.run({ code, ...parking() })
    const opened = await (runtime.openRun as NonNullable<CodeRuntime['openRun']>)(
      'run-1',
      first.suspended?.state as Uint8Array,
    )
    const second = await (runtime.resumeRun as NonNullable<CodeRuntime['resumeRun']>)(opened, {
      call: async (_name, args) => {
        if ((args as { i: number }).i === 2) throw parkCall()
        return 1
      },
      durable: { key: 'run-1b' },
    })
    expect(second.suspended?.parked).toEqual([{ name: 'ask', args: { i: 2 } }])
    await expect(runtime.openRun?.('run-1', second.suspended?.state as Uint8Array)).rejects.toMatchObject({
      code: 'foreign-session',
    })
    const { result } = await resume(runtime, second.suspended?.state as Uint8Array, async () => 41, 'run-1b')
    expect(result.value).toBe(42)
  })

  test('the output budget and the sub-call cap cover every part of the run', async () => {
    const limits = { maxOutputBytes: 20, maxSubCalls: 3 }
    const output = await runtime.run({
      code: 'console.log("0123456789"); await tools.ask({}); console.log("0123456789")',
      ...parking({ limits }),
    })
    const { result: over } = await resume(runtime, output.suspended?.state as Uint8Array, async () => 1)
    expect(over.error?.kind).toBe('output-limit')
    const calls = await runtime.run({
      code: 'await tools.read({ n: 1 }); await tools.ask({}); await tools.read({ n: 2 }); await tools.read({ n: 3 })',
      ...parking({ limits }),
    })
    const { result: capped } = await resume(runtime, calls.suspended?.state as Uint8Array, async () => ({ n: 0 }))
    expect(capped.error?.kind).toBe('limit')
  })

  test('tampered, truncated, foreign-key and other-secret state is refused; the state itself still resumes', async () => {
    const first = await runtime.run({ code: 'return await tools.ask({})', ...parking() })
    const state = first.suspended?.state as Uint8Array
    const flipped = Uint8Array.from(state)
    flipped[flipped.length - 10] = (flipped[flipped.length - 10] as number) ^ 0x40
    const refusal = async (key: string, bytes: Uint8Array, rt: CodeRuntime = runtime) => {
      try {
        await rt.openRun?.(key, bytes)
        return 'opened'
      } catch (error) {
        expect(error).toBeInstanceOf(SnapshotError)
        return (error as SnapshotError).code
      }
    }
    expect(await refusal('run-1', flipped)).toBe('tampered')
    expect(await refusal('run-1', state.subarray(0, state.length - 1))).toBe('truncated')
    expect(await refusal('run-2', state)).toBe('foreign-session')
    const other = createQuickJSRuntime({ isolation, secret: 'another-secret-0123456789abcdefgh' })
    try {
      expect(await refusal('run-1', state, other)).toBe('tampered')
    } finally {
      await other.dispose()
    }
    const { result } = await resume(runtime, state, async () => 'still here')
    expect(result.value).toBe('still here')
  })

  test('a run holding more state than a suspended run may (maxSessionBytes) cannot suspend: it ends as limit', async () => {
    const small = createQuickJSRuntime({ isolation, poolSize: 1, secret, sessions: { maxSessionBytes: 1_000_000 } })
    try {
      const result = await small.run({
        code: 'globalThis.big = "x".repeat(3000000) + "y"; return await tools.ask({})',
        ...parking(),
      })
      expect(result.suspended).toBeUndefined()
      expect(result.error?.kind).toBe('limit')
      expect(result.error?.message).toMatch(
        /waits on a parked call with \d+ bytes of state, over the 1000000-byte budget of a suspended run/,
      )
      // The engine is fine: the next run (durable, small) suspends and resumes.
      const next = await small.run({ code: 'return await tools.ask({})', ...parking() })
      const { result: done } = await resume(small, next.suspended?.state as Uint8Array, async () => 'ok')
      expect(done.value).toBe('ok')
    } finally {
      await small.dispose()
    }
  })

  test('misuse: an opened run resumes once; a bad holdMs is refused', async () => {
    const first = await runtime.run({ code: 'return await tools.ask({})', ...parking() })
    const opened = await (runtime.openRun as NonNullable<CodeRuntime['openRun']>)(
      'run-1',
      first.suspended?.state as Uint8Array,
    )
    await (runtime.resumeRun as NonNullable<CodeRuntime['resumeRun']>)(opened, { call: async () => 1 })
    await expect(runtime.resumeRun?.(opened, { call: async () => 1 })).rejects.toBeInstanceOf(SandboxUsageError)
    await expect(
      runtime.run({ code: 'return 1', ...parking({ durable: { key: 'run-1', holdMs: -1 } }) }),
    ).rejects.toThrow(/holdMs must be a positive finite number/)
  })
})
