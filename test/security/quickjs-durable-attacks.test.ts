/**
 * Durable runs (`CodeRunRequest.durable`, `openRun`, `resumeRun`) on QuickJS worker isolation, against
 * a guest that tries to turn the suspension against the host: staying busy or flooding calls while a
 * call is parked (so that the host suspends at a bad moment, or never), returning or throwing with a
 * call parked, parking as many calls as it may, tampering with the intrinsics the resumption goes
 * through, leaving state for other runs, and parking again and again to escape its budgets. Every
 * test asserts behaviour (kinds, values, what was parked and replayed), never timings.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { createQuickJSRuntime } from '@ptc/sandbox-quickjs'
import {
  SandboxUsageError,
  type CodeRunLimits,
  type CodeRunRequest,
  type CodeRunResult,
  type CodeRuntime,
  type JsonValue,
} from '@ptc/sandbox'
import { parkCall } from '@ptc/sandbox/session'
import { TAMPERED_INTRINSICS } from './hostile.programs.js'

const SECRET = new Uint8Array(32).map((_, i) => (i * 73 + 5) & 0xff)

type Call = CodeRunRequest['call']

/** The host of these tests: `gate` parks (its detail is the arguments), `echo` answers at once. */
const parking: Call = async (name, args) => {
  if (name === 'gate') throw parkCall({ args })
  return { name, args }
}

let keys = 0

async function start(
  rt: CodeRuntime,
  code: string,
  limits: Partial<CodeRunLimits> = {},
  call: Call = parking,
): Promise<{ key: string; result: CodeRunResult }> {
  const key = `attack-${++keys}`
  const result = await rt.run({
    code,
    language: 'javascript',
    bindings: ['gate', 'echo'],
    call,
    durable: { key },
    limits: { cpuMs: 5000, wallMs: 20_000, ...limits },
  })
  return { key, result }
}

async function resume(rt: CodeRuntime, key: string, result: CodeRunResult, call: Call): Promise<CodeRunResult> {
  const state = result.suspended?.state
  if (state === undefined) throw new Error(`the run did not suspend: ${JSON.stringify(result)}`)
  const opened = await (rt.openRun as NonNullable<CodeRuntime['openRun']>)(key, state)
  return (rt.resumeRun as NonNullable<CodeRuntime['resumeRun']>)(opened, { call })
}

describe('durable runs under attack: quickjs worker', () => {
  const runtime = createQuickJSRuntime({ isolation: 'worker', secret: SECRET, poolSize: 2 })
  beforeAll(async () => {
    await runtime.run({ code: 'return 0', bindings: [], call: parking, limits: { wallMs: 60_000 } })
  }, 60_000)
  afterAll(() => runtime.dispose())

  test('a guest that stays busy or keeps calling while a call is parked never suspends: it ends at its CPU budget or a sub-call cap, with no state', async () => {
    for (const [code, kind, limits] of [
      ['tools.gate({})\nwhile (true) {}', 'timeout', {}],
      ['tools.gate({})\nwhile (true) await null', 'timeout', {}],
      [
        'tools.gate({})\nconst f = () => { Promise.resolve().then(f) }\nf()\nawait new Promise(() => {})',
        'timeout',
        {},
      ],
      // A synchronous flood: the pending cap (here 32) stops it before the host sees the calls.
      ['tools.gate({})\nfor (;;) tools.echo({})', 'limit', { maxPendingSubCalls: 32 }],
      // One call in flight at a time, forever: the host is never quiet, so the sub-call cap ends it.
      ['tools.gate({})\nfor (;;) await tools.echo({})', 'limit', { maxSubCalls: 50 }],
    ] as const) {
      const { result } = await start(runtime, code, { cpuMs: 300, ...limits })
      expect(result.error?.kind, `${code}: ${JSON.stringify(result.error)}`).toBe(kind)
      if (kind === 'timeout') expect(result.error?.message).toMatch(/cpu/i)
      expect(result.suspended, code).toBeUndefined()
      expect(result.value).toBeUndefined()
    }
  }, 60_000)

  test('a guest that returns or throws with a call parked ends as usual; one stranded on its own promise suspends and its resumption reports it stuck', async () => {
    // The host is quiet (the gate parked, the echo answered) while the guest is still busy: no suspension.
    const busy = await start(
      runtime,
      'const g = tools.gate({ at: "busy" })\nawait tools.echo({})\nlet s = 0\nfor (let i = 0; i < 1e6; i++) s += i % 7\nreturn s',
    )
    expect(busy.result.error).toBeUndefined()
    expect(busy.result.suspended).toBeUndefined()
    expect(busy.result.value).toBe(2999997)
    const thrown = await start(
      runtime,
      'tools.gate({}).catch(() => {})\nawait tools.echo({})\nthrow new RangeError("out")',
    )
    expect(thrown.result.suspended).toBeUndefined()
    expect(thrown.result.error?.kind).toBe('exception')
    expect(thrown.result.error?.message).toMatch(/RangeError: out/)
    // It waits on nothing the host could settle but the parked call: the run suspends (the host cannot tell);
    // once the call is answered, the resumed run ends at once as stuck instead of waiting for its wall.
    const stranded = await start(
      runtime,
      'tools.gate({ at: "stranded" })\nawait new Promise(() => {})\nreturn "unreachable"',
    )
    expect(stranded.result.suspended?.parked).toEqual([
      { name: 'gate', args: { at: 'stranded' }, detail: { args: { at: 'stranded' } } },
    ])
    const after = await resume(runtime, stranded.key, stranded.result, async () => 'answered')
    expect(after.suspended).toBeUndefined()
    expect(after.value).toBeUndefined()
    expect(after.error?.kind).toBe('exception')
    expect(after.error?.message).toMatch(/never settle/)
  }, 30_000)

  test('parking as many calls as the pending cap allows suspends with all of them in order; one more ends as limit with no state', async () => {
    const code = (n: number): string =>
      `const rs = await Promise.all(Array.from({ length: ${n} }, (_, i) => tools.gate({ i })))\nreturn rs.reduce((a, b) => a + b, 0)`
    const full = await start(runtime, code(64), { maxPendingSubCalls: 64 })
    expect(full.result.error).toBeUndefined()
    expect(full.result.suspended?.parked.map((p) => p.args)).toEqual(Array.from({ length: 64 }, (_, i) => ({ i })))
    const replayed: JsonValue[] = []
    const resumed = await resume(runtime, full.key, full.result, async (name, args) => {
      replayed.push(args)
      return (args as { i: number }).i
    })
    expect(replayed).toEqual(Array.from({ length: 64 }, (_, i) => ({ i })))
    expect(resumed.error).toBeUndefined()
    expect(resumed.value).toBe((63 * 64) / 2)
    expect(resumed.stats.subCalls).toBe(64)
    const over = await start(runtime, code(65), { maxPendingSubCalls: 64 })
    expect(over.result.error?.kind).toBe('limit')
    expect(over.result.suspended).toBeUndefined()
  }, 30_000)

  test('intrinsics the guest replaced before it parked do not corrupt the resumption, opened by another runtime with the same secret', async () => {
    const code = `${TAMPERED_INTRINSICS}
      Object.keys = () => ['hacked']; Object.getPrototypeOf = () => null; Object.create = () => { throw new Error('create') }
      Object.freeze = (o) => o; Object.defineProperty = () => { throw new Error('defineProperty') }
      Promise.prototype.then = function () { throw new Error('then') }
      Map.prototype.get = () => 'evil'; Array.prototype.push = () => { throw new Error('push') }
      const v = await tools.gate({ list: [1, 2], nested: { k: 'v' } })
      console.log('resumed', v.nested.k)
      return { k: v.nested.k, list: v.list, more: await tools.echo({ after: true }) }`
    const first = await start(runtime, code)
    expect(first.result.error).toBeUndefined()
    expect(first.result.suspended?.parked).toEqual([
      {
        name: 'gate',
        args: { list: [1, 2], nested: { k: 'v' } },
        detail: { args: { list: [1, 2], nested: { k: 'v' } } },
      },
    ])
    const other = createQuickJSRuntime({ isolation: 'worker', secret: SECRET, poolSize: 1 })
    try {
      const got: JsonValue[] = []
      const resumed = await resume(
        other,
        first.key,
        first.result,
        async (name, args) => (
          got.push(args), name === 'gate' ? { ...(args as object), from: 'host' } : { name, args }
        ),
      )
      expect(got).toEqual([{ list: [1, 2], nested: { k: 'v' } }, { after: true }])
      expect(resumed.error).toBeUndefined()
      expect(resumed.logs).toEqual(['resumed v'])
      expect(resumed.value).toEqual({ k: 'v', list: [1, 2], more: { name: 'echo', args: { after: true } } })
    } finally {
      await other.dispose()
    }
  }, 30_000)

  test("a suspended run's memory is its own: nothing crosses between it, plain runs on the same engine, and other durable runs", async () => {
    // One worker: every run below is on the same engine.
    const one = createQuickJSRuntime({ isolation: 'worker', secret: SECRET, poolSize: 1 })
    const plain = (code: string): Promise<CodeRunResult> => one.run({ code, bindings: ['echo'], call: parking })
    try {
      expect((await plain("globalThis.leak = 'plain'; Object.prototype.polluted = 'plain'; return 1")).value).toBe(1)
      const a = await start(
        one,
        "const seen = [typeof leak, String(({}).polluted)]\nglobalThis.mine = 'A'; Array.prototype.evil = 'A'\nconst v = await tools.gate({ run: 'A' })\nreturn [seen, mine, [].evil, typeof leak, String(({}).polluted), v]",
      )
      expect(a.result.suspended?.parked.map((p) => p.args)).toEqual([{ run: 'A' }])
      const between = 'return [typeof mine, String([].evil), typeof leak, String(({}).polluted)]'
      expect((await plain(between)).value).toEqual(['undefined', 'undefined', 'undefined', 'undefined'])
      const b = await start(
        one,
        "const seen = [typeof mine, String([].evil)]\nglobalThis.mine = 'B'\nconst v = await tools.gate({ run: 'B' })\nreturn [seen, mine, String([].evil), v]",
      )
      const resumedA = await resume(one, a.key, a.result, async () => 'a')
      expect(resumedA.value).toEqual([['undefined', 'undefined'], 'A', 'A', 'undefined', 'undefined', 'a'])
      expect((await plain(between)).value).toEqual(['undefined', 'undefined', 'undefined', 'undefined'])
      const resumedB = await resume(one, b.key, b.result, async () => 'b')
      expect(resumedB.value).toEqual([['undefined', 'undefined'], 'B', 'undefined', 'b'])
      expect((await plain(between)).value).toEqual(['undefined', 'undefined', 'undefined', 'undefined'])
    } finally {
      await one.dispose()
    }
  }, 30_000)

  test('a guest that parks again after every resumption cannot escape its sub-call budget', async () => {
    const { key, result: first } = await start(runtime, 'let n = 0\nfor (;;) n += await tools.gate({ n })', {
      maxSubCalls: 5,
    })
    let result = first
    let suspensions = 0
    while (result.suspended !== undefined && suspensions < 20) {
      suspensions++
      expect(result.suspended.parked).toHaveLength(1)
      // The replayed call is answered; the program's next call parks again.
      let answered = false
      result = await resume(runtime, key, result, async () => {
        if (answered) throw parkCall()
        answered = true
        return 1
      })
    }
    expect(suspensions).toBe(5)
    expect(result.error?.kind).toBe('limit')
    expect(result.error?.message).toMatch(/sub-call limit of 5/)
    expect(result.stats.subCalls).toBe(5)
  }, 30_000)

  test('the CPU and wall budgets carry across a suspension: a second part that would fit a fresh run times out', async () => {
    // Each part spins on the guest's own clock inside one engine entry, so it is charged at least that long: 40% and
    // 70% of the budget. The wall budget is the larger: a loaded machine delays a run's start, which its wall counts.
    const code = (budget: number): string =>
      'const spin = (ms) => { const t = Date.now(); while (Date.now() - t < ms) {} }\n' +
      `spin(${budget * 0.4})\nawait tools.gate({})\nspin(${budget * 0.7})\nreturn "fits"`
    for (const [which, limits, budget] of [
      ['cpu', { cpuMs: 2000, wallMs: 30_000 }, 2000],
      ['wall', { cpuMs: 30_000, wallMs: 5000 }, 5000],
    ] as const) {
      const first = await start(runtime, code(budget), limits)
      expect(first.result.error, which).toBeUndefined()
      expect(first.result.suspended?.parked, which).toHaveLength(1)
      const resumed = await resume(runtime, first.key, first.result, async () => 1)
      expect(resumed.value, which).toBeUndefined()
      expect(resumed.error?.kind, which).toBe('timeout')
      expect(resumed.error?.message, which).toMatch(which === 'cpu' ? /cpu/i : /wall/i)
    }
  }, 60_000)

  // Not a guest's doing, but a durable-run path: a host that builds keys from input (or sets durable and session)
  // would lose one place per refused request, until every run of the runtime waits out its wall in the queue.
  test('a durable request refused as misuse gives its run place back: the next run is not left waiting in the queue', async () => {
    const gated = createQuickJSRuntime({ isolation: 'worker', secret: SECRET, poolSize: 1, maxConcurrentRuns: 1 })
    try {
      await expect(
        gated.run({ code: 'return 1', bindings: [], call: parking, durable: { key: '' } }),
      ).rejects.toBeInstanceOf(SandboxUsageError)
      const next = await gated.run({ code: 'return 2', bindings: [], call: parking, limits: { wallMs: 10_000 } })
      expect(next.error).toBeUndefined()
      expect(next.value).toBe(2)
    } finally {
      await gated.dispose()
    }
  }, 30_000)
})
