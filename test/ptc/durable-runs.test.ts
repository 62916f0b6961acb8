/**
 * Durable approval in one process, on QuickJS (both isolations): what suspends and when, several calls
 * waiting at once, a program that waits twice, a program in a sandbox session, and every way a deferral
 * cannot wait (no durable store, a model-direct call) or a resume is refused.
 */
import { createHash } from 'node:crypto'
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createQuickJSRuntime } from '@ptc/sandbox-quickjs'
import { createFileSessionStore, type SessionStore } from '@ptc/sandbox/session'
import { createPtcExecutor, ResumeError, RUNTIME_ANSWER_GRACE_MS, type PtcExecutorOptions } from '@ptc/ptc'
import { ptcHarness, text, type PtcHarness } from '@ptc/ptc/testing'
import type { CodeRuntime } from '@ptc/sandbox'
import type { ToolExecutionResult } from '@ptc/tools'
import { afterAll, describe, expect, test } from 'vitest'

const dir = mkdtempSync(join(tmpdir(), 'ptc-durable-runs-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))
let stores = 0
const store = (): SessionStore => createFileSessionStore({ directory: join(dir, `store-${++stores}`) })

/** A harness whose `write` calls ask for approval, and whose approval service defers. */
function harness(runtime: CodeRuntime, options: Omit<PtcExecutorOptions, 'runtime'> = {}): PtcHarness {
  const h = ptcHarness(runtime, { ...options, approval: { request: async () => 'deferred' } })
  h.tools.on('tools/pre-execute', (exec, next) =>
    exec.name === 'write'
      ? { kind: 'ask', reason: `writes ${String((exec.arguments as { key: string }).key)}` }
      : next(),
  )
  return h
}

const value = (result: { value?: unknown }): Record<string, unknown> => result.value as Record<string, unknown>
const awaiting = (result: { value?: unknown }) =>
  value(result).awaiting as { token: string; calls: { tool: string; arguments: unknown; reason?: string }[] }
const resume = (
  h: PtcHarness,
  token: string,
  decision: 'allowed-once' | 'rejected' | ('allowed-once' | 'rejected')[],
) =>
  h.tools.resume({ token, decision, agent: h.agent, signal: new AbortController().signal, log: { turn: 2, step: 1 } })

describe.each(['worker', 'inline'] as const)('durable approval on QuickJS (%s)', (isolation) => {
  const runtime = createQuickJSRuntime({ isolation, poolSize: 2, sessions: {} })
  afterAll(() => runtime.dispose())

  test('two deferred calls and one that takes its time: one suspension, then a decision per call', async () => {
    const h = harness(runtime, { durable: { store: store() } })
    const first = await h.runCode(`
      const got = await Promise.allSettled([tools.write({ key: 'a' }), tools.lookup({ key: 'slow', delayMs: 30 }), tools.write({ key: 'b' })])
      return got.map((r) => r.status === 'fulfilled' ? r.value : r.reason.code)
    `)
    expect(first.isError).toBe(false)
    expect(awaiting(first).calls).toEqual([
      { tool: 'write', arguments: { key: 'a' }, reason: 'writes a' },
      { tool: 'write', arguments: { key: 'b' }, reason: 'writes b' },
    ])
    // The slow lookup settled before the program suspended.
    expect(h.trace).toEqual(['start slow', 'end slow'])
    const resumed = await resume(h, awaiting(first).token, ['allowed-once', 'rejected'])
    const result = resumed.results[0]?.result
    expect(result?.isError).toBe(false)
    expect(value(result as { value?: unknown }).result).toEqual([{ written: 'a' }, { key: 'slow', value: 4 }, 'DENIED'])
    // Only the approved write ran: the rejected one never reached its body.
    expect(h.trace).toEqual(['start slow', 'end slow', 'start write a', 'end write a'])
    const types = h.session.events.map((e) => e.type)
    expect(types.filter((t) => t === 'tool/ptc-suspend' || t === 'tool/ptc-resume')).toEqual([
      'tool/ptc-suspend',
      'tool/ptc-resume',
    ])
  })

  test("the resumed result reaches the run_code call's post-execute listeners and tools/result, with the call's arguments", async () => {
    const h = harness(runtime, { durable: { store: store() } })
    const seen: { stage: string; callId: string; code: unknown; text: string }[] = []
    const code = `const w = await tools.write({ key: 'k' }); return w.written`
    h.tools.on('tools/post-execute', (exec, result, next) => {
      if (exec.name !== 'run_code') return next()
      seen.push({
        stage: 'post',
        callId: exec.callId,
        code: (exec.arguments as { code?: unknown }).code,
        text: text(result),
      })
      return { kind: 'accept', content: [{ type: 'text', text: `${text(result)} [checked]` }] }
    })
    h.tools.on('tools/result', (exec, result) => {
      if (exec.name === 'run_code')
        seen.push({
          stage: 'result',
          callId: exec.callId,
          code: (exec.arguments as { code?: unknown }).code,
          text: text(result),
        })
    })
    const first = await h.runCode(code)
    expect(text(first)).toMatch(/\[checked\]$/)
    seen.length = 0
    const resumed = (await resume(h, awaiting(first).token, 'allowed-once')).results[0]
    expect(value(resumed?.result as { value?: unknown }).result).toBe('k')
    // The listeners saw the resumed outcome of the same call, and what the post-execute listener did is in the result.
    expect(seen.map((s) => [s.stage, s.callId, s.code])).toEqual([
      ['post', resumed?.callId, code],
      ['result', resumed?.callId, code],
    ])
    expect(seen[0]?.text).not.toMatch(/checked/)
    expect(text(resumed?.result as ToolExecutionResult)).toMatch(/\[checked\]$/)
    expect(seen[1]?.text).toBe(text(resumed?.result as ToolExecutionResult))
  })

  test("the ask decision's localized displayReason travels with the waiting call: in awaiting and in the log", async () => {
    const h = ptcHarness(runtime, { durable: { store: store() }, approval: { request: async () => 'deferred' } })
    const displayReason = { en: 'Writes the record "k"', fr: "Écrit l'enregistrement « k »" }
    h.tools.on('tools/pre-execute', (exec, next) =>
      exec.name === 'write' ? { kind: 'ask', reason: 'writes k', displayReason } : next(),
    )
    const first = await h.runCode(`return (await tools.write({ key: 'k' })).written`)
    expect(awaiting(first).calls).toEqual([
      { tool: 'write', arguments: { key: 'k' }, reason: 'writes k', displayReason },
    ])
    // The text the model reads keeps the plain reason only.
    expect(text(first)).toContain('(writes k)')
    expect(text(first)).not.toContain('Écrit')
    const suspend = h.session.events.find((e) => e.type === 'tool/ptc-suspend') as
      | { awaiting?: { displayReason?: unknown }[] }
      | undefined
    expect(suspend?.awaiting?.[0]?.displayReason).toEqual(displayReason)
    const resumed = (await resume(h, awaiting(first).token, 'allowed-once')).results[0]?.result as { value?: unknown }
    expect(value(resumed).result).toBe('k')
  })

  test("the log's suspension keeps the waiting calls' arguments within the log limits; awaiting keeps them whole", async () => {
    const h = harness(runtime, { durable: { store: store() }, logLimits: { maxValueChars: 1_000 } })
    const first = await h.runCode(
      `const long = 'v'.repeat(5000); await Promise.all([tools.write({ key: 'a' }), tools.write({ key: 'b', value: long })]); return 1`,
    )
    const long = 'v'.repeat(5000)
    expect(awaiting(first).calls.map((c) => c.arguments)).toEqual([{ key: 'a' }, { key: 'b', value: long }])
    const suspend = h.session.events.find((e) => e.type === 'tool/ptc-suspend') as
      | { awaiting?: { name: string; arguments: unknown; elided?: unknown }[] }
      | undefined
    const whole = JSON.stringify({ key: 'b', value: long })
    expect(suspend?.awaiting).toEqual([
      { name: 'write', arguments: { key: 'a' }, reason: 'writes a', subCallId: expect.any(String) },
      {
        name: 'write',
        arguments: `${whole.slice(0, 256)}…`,
        reason: 'writes b',
        subCallId: expect.any(String),
        elided: { arguments: { bytes: whole.length, sha256: createHash('sha256').update(whole).digest('hex') } },
      },
    ])
    expect(
      value((await resume(h, awaiting(first).token, 'allowed-once')).results[0]?.result as { value?: unknown }).result,
    ).toBe(1)
  })

  test('a program that waits twice suspends twice, each time under a new token', async () => {
    const h = harness(runtime, { durable: { store: store() } })
    const first = await h.runCode(
      `const a = await tools.write({ key: 'one' }); console.log('first done'); const b = await tools.write({ key: 'two' }); return [a, b]`,
    )
    const second = (await resume(h, awaiting(first).token, 'allowed-once')).results[0]?.result as {
      value?: unknown
      isError: boolean
    }
    expect(value(second).logs).toEqual(['first done'])
    expect(awaiting(second).calls.map((c) => c.arguments)).toEqual([{ key: 'two' }])
    expect(awaiting(second).token).not.toBe(awaiting(first).token)
    const third = (await resume(h, awaiting(second).token, 'allowed-once')).results[0]?.result as { value?: unknown }
    expect(value(third).result).toEqual([{ written: 'one' }, { written: 'two' }])
    // Sub-call ids go on across the parts: none is used twice.
    const ids = h.session.events.filter((e) => e.type === 'tool/ptc-dispatch-start').map((e) => e.subCallId)
    expect(new Set(ids).size).toBe(ids.length)
  })

  test('in a sandbox session, a deferral suspends the program with the session: the session waits for the resume, which leaves it its state', async () => {
    const h = harness(runtime, { durable: { store: store() }, sessions: true })
    expect(text(await h.runCode('let count = 1; return count'))).toBe('1')
    const first = await h.runCode("count += 1; globalThis.w = await tools.write({ key: 'a' }); return count")
    expect(first.isError).toBe(false)
    expect(value(first).session).toMatch(/^the program suspended: the session waits for its resume/)
    expect(text(first)).toContain('[sandbox session: the program suspended')
    // The session runs nothing else until then, and says why.
    const held = await h.runCode('return count')
    expect(held.isError).toBe(true)
    expect(text(held)).toMatch(/waits for the resume of a program of it that suspended \(durable approval\)/)
    const done = (await resume(h, awaiting(first).token, 'allowed-once')).results[0]?.result as ToolExecutionResult
    expect(done.isError).toBe(false)
    expect(value(done).result).toBe(2)
    expect(JSON.parse(text(await h.runCode('return [count, w]')))).toEqual([2, { written: 'a' }])
    // Rejected: the program catches DENIED, and the session keeps what it did after.
    const second = await h.runCode(
      "try { await tools.write({ key: 'b' }) } catch (e) { globalThis.why = e.code } return count",
    )
    await resume(h, awaiting(second).token, 'rejected')
    expect(text(await h.runCode('return why'))).toBe('DENIED')
    expect(h.trace).toEqual(['start write a', 'end write a'])
  })

  test('without durable, or as a model-direct call, a deferral denies the call', async () => {
    const plain = harness(runtime)
    expect(
      text(
        await plain.runCode(`try { await tools.write({ key: 'x' }) } catch (e) { return e.code + ': ' + e.message }`),
      ),
    ).toMatch(/^DENIED: approval was deferred \(writes x\), but this call cannot wait/)
    const session = harness(runtime, { sessions: true })
    expect(text(await session.runCode(`try { await tools.write({ key: 'y' }) } catch (e) { return e.code }`))).toBe(
      'DENIED',
    )
    const direct = harness(runtime, { durable: { store: store() }, mode: 'both' })
    const out = await direct.batch([{ type: 'tool_call', id: 'd1', name: 'write', arguments: '{"key":"z"}' }])
    expect(out.results[0]?.result).toMatchObject({ isError: true, error: { info: { code: 'DENIED' } } })
    expect(direct.trace).toEqual([])
  })

  test('a resume that is refused changes nothing: bad decisions, unknown tokens; the token then resumes', async () => {
    const h = harness(runtime, { durable: { store: store() } })
    const first = await h.runCode(`return await tools.write({ key: 'k' })`)
    const { token } = awaiting(first)
    await expect(resume(h, token, 'maybe' as 'rejected')).rejects.toMatchObject({ code: 'BAD_DECISION' })
    await expect(resume(h, token, ['allowed-once', 'allowed-once'])).rejects.toBeInstanceOf(ResumeError)
    await expect(resume(h, 'ptc-run-unknown', 'allowed-once')).rejects.toMatchObject({ code: 'UNKNOWN_TOKEN' })
    // Only the agent the program ran for may resume it.
    await expect(
      h.tools.resume({
        token,
        decision: 'allowed-once',
        agent: { id: 'someone-else' },
        signal: new AbortController().signal,
      }),
    ).rejects.toMatchObject({ code: 'WRONG_AGENT' })
    await expect(
      h.tools.resume({ token, decision: 'allowed-once', signal: new AbortController().signal }),
    ).rejects.toMatchObject({ code: 'WRONG_AGENT' })
    const done = await resume(h, token, 'allowed-once')
    expect(value(done.results[0]?.result as { value?: unknown }).result).toEqual({ written: 'k' })
  })

  test('a token no store could hold, and a store that fails to read, are refused as ResumeErrors and change nothing', async () => {
    const kept = store()
    const h = harness(runtime, { durable: { store: kept } })
    const { token } = awaiting(await h.runCode(`return await tools.write({ key: 'k' })`))
    for (const bad of ['', 'x'.repeat(5_000), 'lone \ud800 surrogate']) {
      const refused = resume(h, bad, 'allowed-once')
      await expect(refused).rejects.toBeInstanceOf(ResumeError)
      await expect(refused).rejects.toMatchObject({
        code: 'UNKNOWN_TOKEN',
        message: expect.stringMatching(/^no suspended program has token ".{0,101}": it cannot be one \(a session key /),
      })
    }
    // A store whose read throws at once, or rejects: the store could not answer; the state is untouched.
    for (const fail of [
      () => {
        throw new Error('disk on fire')
      },
      () => Promise.reject(new Error('disk on fire')),
    ]) {
      const failing: SessionStore = {
        ...kept,
        get: fail as SessionStore['get'],
        take: fail as NonNullable<SessionStore['take']>,
      }
      const other = harness(runtime, { durable: { store: failing } })
      const refused = resume(other, token, 'allowed-once')
      await expect(refused).rejects.toMatchObject({
        code: 'STORE_UNAVAILABLE',
        message: `the store failed to give the state of token ${JSON.stringify(token)}: disk on fire; try again later`,
      })
    }
    const done = await resume(h, token, 'allowed-once')
    expect(value(done.results[0]?.result as { value?: unknown }).result).toEqual({ written: 'k' })
  })

  test('a state the store cannot read is refused as such (STATE_REFUSED), and kept aside in the file store for someone to inspect', async () => {
    const folder = join(dir, `store-${++stores}`)
    const h = harness(runtime, { durable: { store: createFileSessionStore({ directory: folder }) } })
    const { token } = awaiting(await h.runCode(`return await tools.write({ key: 'k' })`))
    // The file store's file of a key: its SHA-256, in hex.
    const entry = join(folder, `${createHash('sha256').update(token).digest('hex')}.session`)
    writeFileSync(entry, 'PTSF')
    const refused: unknown = await resume(h, token, 'allowed-once').catch((thrown: unknown) => thrown)
    expect(refused).toMatchObject({ code: 'STATE_REFUSED' })
    expect((refused as Error).message).toContain(
      `the state of token ${JSON.stringify(token)} cannot be read: the session store file ${entry} (key ${JSON.stringify(token)}) is not a store file: it has 4 bytes, fewer than the 24-byte header. It was moved aside to ${entry}.unreadable-`,
    )
    expect(readdirSync(folder).filter((name) => name.includes('.unreadable-'))).toHaveLength(1)
    await expect(resume(h, token, 'allowed-once')).rejects.toMatchObject({ code: 'UNKNOWN_TOKEN' })
    expect(h.trace).toEqual([])
  })

  test('a refused resume leaves a store with claims untouched, and a store that takes gets the state back until it would have expired, not for a new TTL', async () => {
    const inner = store()
    const ttls: number[] = []
    const set: SessionStore['set'] = (key, bytes, options) => (
      ttls.push(options?.ttlMs ?? -1), inner.set(key, bytes, options)
    )
    // With claims (the file store's own): the state never leaves the store before the program goes on.
    const claiming = harness(runtime, { durable: { store: { ...inner, set }, ttlMs: 60_000 } })
    const leased = awaiting(await claiming.runCode(`return await tools.write({ key: 'c' })`)).token
    await expect(
      claiming.tools.resume({
        token: leased,
        decision: 'allowed-once',
        agent: { id: 'someone-else' },
        signal: new AbortController().signal,
      }),
    ).rejects.toMatchObject({ code: 'WRONG_AGENT' })
    expect(ttls).toEqual([60_000])
    expect(
      value((await resume(claiming, leased, 'allowed-once')).results[0]?.result as { value?: unknown }).result,
    ).toEqual({ written: 'c' })
    ttls.length = 0
    // A store that takes, without claims: the state is taken at once, and put back.
    const recording: SessionStore = {
      get: inner.get.bind(inner),
      delete: inner.delete.bind(inner),
      set,
      take: (inner.take as NonNullable<SessionStore['take']>).bind(inner),
    }
    const h = harness(runtime, { durable: { store: recording, ttlMs: 60_000 } })
    const { token } = awaiting(await h.runCode(`return await tools.write({ key: 'k' })`))
    expect(ttls).toEqual([60_000])
    await new Promise((resolve) => setTimeout(resolve, 30))
    await expect(
      h.tools.resume({
        token,
        decision: 'allowed-once',
        agent: { id: 'someone-else' },
        signal: new AbortController().signal,
      }),
    ).rejects.toMatchObject({ code: 'WRONG_AGENT' })
    // Put back (the file store takes on resume) with what was left of the first TTL.
    expect(ttls).toHaveLength(2)
    expect(ttls[1]).toBeGreaterThan(0)
    expect(ttls[1]).toBeLessThanOrEqual(60_000 - 25)
    expect(value((await resume(h, token, 'allowed-once')).results[0]?.result as { value?: unknown }).result).toEqual({
      written: 'k',
    })
  })

  test('a store that cannot remove the state as the program goes on: the program is stopped before its first call, the state stays, a later resume runs it once', async () => {
    const inner = store()
    let failing = true
    const flaky: SessionStore = {
      ...inner,
      delete: async (key) => (failing ? Promise.reject(new Error('disk on fire')) : inner.delete(key)),
    }
    const h = harness(runtime, { durable: { store: flaky } })
    const { token } = awaiting(await h.runCode(`const w = await tools.write({ key: 'flaky' }); return w.written`))
    const refused: unknown = await resume(h, token, 'allowed-once').catch((thrown: unknown) => thrown)
    expect(refused).toMatchObject({ code: 'STORE_UNAVAILABLE' })
    expect((refused as Error).message).toMatch(
      /did not confirm .* that it removed the state of token .*, so the program was stopped before its first call: its state stays stored \(written back if the store removes it late\); try again later$/,
    )
    expect(h.trace).toEqual([])
    failing = false
    expect(value((await resume(h, token, 'allowed-once')).results[0]?.result as { value?: unknown }).result).toBe(
      'flaky',
    )
    expect(h.trace).toEqual(['start write flaky', 'end write flaky'])
    await expect(resume(h, token, 'allowed-once')).rejects.toMatchObject({ code: 'UNKNOWN_TOKEN' })
  })

  test('a delete the store confirms too late (it happens once the store is back): the state is written back before the lease ends; a later resume runs the program once', async () => {
    const inner = store()
    let token = ''
    let first = true
    let letGo = (): void => undefined
    let released = (): void => undefined
    const releasedLease = new Promise<void>((resolve) => (released = resolve))
    const late: SessionStore = {
      ...inner,
      // The first delete of the state waits until the test lets it go, then deletes (a Redis command sent late).
      delete: (key) => {
        if (key !== token || !first) return inner.delete(key)
        first = false
        return new Promise<void>((resolve) => (letGo = resolve)).then(() => inner.delete(key))
      },
      release: async (key, holder) => {
        await (inner.release as NonNullable<SessionStore['release']>)(key, holder)
        if (key.startsWith(token)) released()
      },
    }
    const h = harness(runtime, { durable: { store: late, storeWaitMs: 100 } })
    ;({ token } = awaiting(await h.runCode(`const w = await tools.write({ key: 'late' }); return w.written`)))
    const refused: unknown = await resume(h, token, 'allowed-once').catch((thrown: unknown) => thrown)
    expect(refused).toMatchObject({ code: 'STORE_UNAVAILABLE' })
    expect((refused as Error).message).toMatch(
      /, so the program was stopped before its first call: its state stays stored \(written back if the store removes it late\); try again later$/,
    )
    // The lease is kept while the delete is pending: no other resume reads the state meanwhile.
    await expect(resume(h, token, 'allowed-once')).rejects.toMatchObject({ code: 'IN_PROGRESS' })
    letGo()
    await releasedLease
    expect(h.trace).toEqual([])
    expect(value((await resume(h, token, 'allowed-once')).results[0]?.result as { value?: unknown }).result).toBe(
      'late',
    )
    expect(h.trace).toEqual(['start write late', 'end write late'])
    await expect(resume(h, token, 'allowed-once')).rejects.toMatchObject({ code: 'UNKNOWN_TOKEN' })
  })

  test('a long run that suspends in the background: its next part is the wait for approval', async () => {
    const h = harness(runtime, { durable: { store: store() }, longRuns: { returnAfterMs: 20 } })
    let part = await h.runCode(
      `await tools.lookup({ key: 'slow', delayMs: 200 }); console.log('looked'); return await tools.write({ key: 'w' })`,
    )
    const logs: unknown[] = []
    // The first part returns while the lookup runs (unless this machine is slower than the lookup); then wait.
    while (value(part).running !== undefined) {
      logs.push(...(value(part).logs as unknown[]))
      const waited = await h.batch([
        {
          type: 'tool_call',
          id: `w${logs.length}`,
          name: 'run_code',
          arguments: JSON.stringify({ wait: value(part).running, description: 'wait' }),
        },
      ])
      part = waited.results[0]?.result as typeof part
    }
    logs.push(...(value(part).logs as unknown[]))
    expect(logs).toEqual(['looked'])
    expect(awaiting(part).calls).toEqual([{ tool: 'write', arguments: { key: 'w' }, reason: 'writes w' }])
    const done = await resume(h, awaiting(part).token, 'allowed-once')
    expect(value(done.results[0]?.result as { value?: unknown }).result).toEqual({ written: 'w' })
  })

  test('two harnesses sharing a store resume one token at once: the program goes on once, the other is told', async () => {
    const shared = store()
    const a = harness(runtime, { durable: { store: shared } })
    const b = harness(runtime, { durable: { store: shared } })
    const first = await a.runCode(`return await tools.write({ key: 'once' })`)
    const { token } = awaiting(first)
    const outcomes = await Promise.allSettled([
      resume(a, token, 'allowed-once'),
      b.tools.resume({ token, decision: 'allowed-once', agent: a.agent, signal: new AbortController().signal }),
    ])
    expect(outcomes.map((o) => o.status).sort()).toEqual(['fulfilled', 'rejected'])
    // Told that another resume has it (it holds the token's claim), or, once that one is done, that the token is gone.
    const told = (outcomes.find((o) => o.status === 'rejected') as PromiseRejectedResult).reason as { code: string }
    expect(['IN_PROGRESS', 'UNKNOWN_TOKEN']).toContain(told.code)
    // The approved body ran once, in whichever harness won.
    expect([...a.trace, ...b.trace].filter((t) => t === 'start write once')).toHaveLength(1)
  })

  test('a runtime disposed under a resume runs nothing and loses nothing: the state goes back for another process', async () => {
    const shared = store()
    const secret = 'a secret both runtimes share, 32+ bytes long'
    const first = createQuickJSRuntime({ isolation, poolSize: 1, secret })
    // The harness shuts its runtime down while a resume is on its way: after the state was opened, before it went on.
    const closing: CodeRuntime = {
      name: first.name,
      limits: first.limits,
      run: (request) => first.run(request),
      openRun: async (key, state) => {
        const opened = await (first.openRun as NonNullable<CodeRuntime['openRun']>)(key, state)
        await first.dispose()
        return opened
      },
      resumeRun: (run, request) => (first.resumeRun as NonNullable<CodeRuntime['resumeRun']>)(run, request),
      dispose: () => first.dispose(),
      [Symbol.asyncDispose]: () => first.dispose(),
    }
    const a = harness(closing, { durable: { store: shared } })
    const { token } = awaiting(await a.runCode(`return await tools.write({ key: 'later' })`))
    await expect(resume(a, token, 'allowed-once')).rejects.toMatchObject({ code: 'SANDBOX_DISPOSED' })
    expect(a.trace).toEqual([])
    // Its log says the program suspended, not that it went on.
    expect(a.session.events.map((e) => e.type).filter((t) => t.startsWith('tool/ptc-'))).toEqual([
      'tool/ptc-dispatch-start',
      'tool/ptc-dispatch',
      'tool/ptc-suspend',
    ])
    await using second = createQuickJSRuntime({ isolation, poolSize: 1, secret })
    const b = harness(second, { durable: { store: shared } })
    const done = (await resume(b, token, 'allowed-once')).results[0]?.result as ToolExecutionResult
    expect(value(done).result).toEqual({ written: 'later' })
    expect(b.trace).toEqual(['start write later', 'end write later'])
  })

  test('a session store that fails to give a resumed program its session: the resume is refused having run nothing, and the state goes back', async () => {
    const inner = createFileSessionStore({ directory: join(dir, `sessions-${++stores}`) })
    let failing = false
    const flaky: SessionStore = {
      get: (key) => inner.get(key),
      set: (key, bytes, options) => inner.set(key, bytes, options),
      delete: (key) => inner.delete(key),
      claim: async (key, holder, ttlMs, options) => {
        if (failing && options?.replaces?.startsWith('parked:') === true) throw new Error('ECONNRESET')
        return (inner.claim as NonNullable<SessionStore['claim']>)(key, holder, ttlMs, options)
      },
      release: (key, holder) => (inner.release as NonNullable<SessionStore['release']>)(key, holder),
    }
    await using sessions = createQuickJSRuntime({
      isolation,
      poolSize: 1,
      secret: 'a secret of at least 16 bytes',
      sessions: { store: flaky },
    })
    const h = harness(sessions, { durable: { store: store() }, sessions: true })
    expect(text(await h.runCode('let count = 1; return count'))).toBe('1')
    const { token } = awaiting(await h.runCode("count += 1; return await tools.write({ key: 'w' })"))
    failing = true
    await expect(resume(h, token, 'allowed-once')).rejects.toMatchObject({
      name: 'SessionStoreError',
      code: 'unavailable',
    })
    expect(h.trace).toEqual([])
    failing = false
    const done = (await resume(h, token, 'allowed-once')).results[0]?.result as ToolExecutionResult
    expect(value(done).result).toEqual({ written: 'w' })
    expect(text(await h.runCode('return count'))).toBe('2')
    // The refused resume left no trace in the log: the program went on once.
    const resumes = h.session.events.filter((e) => e.type === 'tool/ptc-resume')
    expect(resumes).toEqual([expect.objectContaining({ token, decisions: ['allowed-once'] })])
  })

  test('a store that cannot keep the state fails the call, saying the program is lost', async () => {
    const failing: SessionStore = {
      get: async () => undefined,
      set: async () => Promise.reject(new Error('disk full')),
      delete: async () => false,
    }
    const h = harness(runtime, { durable: { store: failing } })
    const result = await h.runCode(`console.log('so far'); return await tools.write({ key: 'k' })`)
    expect(result.isError).toBe(true)
    expect(text(result)).toMatch(/could not be stored \(disk full\); it is lost/)
    expect(text(result)).toContain('so far')
    // A store's message reaches the model's text only up to 300 characters.
    const verbose: SessionStore = {
      ...failing,
      set: async () => Promise.reject(new Error(`disk full: ${'x'.repeat(100_000)}`)),
    }
    const long = await harness(runtime, { durable: { store: verbose } }).runCode(
      `return await tools.write({ key: 'k' })`,
    )
    expect(text(long)).toMatch(/could not be stored \(disk full: x{289}…\); it is lost/)
    expect(text(long).length).toBeLessThan(1_000)
    // In a sandbox session: the lost program does not hold the session, which goes on from its state before it.
    const session = harness(runtime, { durable: { store: failing }, sessions: true })
    expect(text(await session.runCode('let kept = "before"; return kept'))).toBe('before')
    const lost = await session.runCode(`kept = 'during'; return await tools.write({ key: 'k' })`)
    expect(text(lost)).toMatch(/could not be stored \(disk full\); it is lost/)
    const next = await session.runCode('return kept')
    expect(next.isError).toBe(false)
    expect(text(next)).toContain('before')
    expect(text(next)).toContain('was dropped without being resumed')
  })

  test('a store that stops answering: the call ends saying the state could not be stored; a resume is refused and the state is there for the next', async () => {
    const never = <T>(): Promise<T> => new Promise<T>(() => undefined)
    const stalled: SessionStore = { get: never, set: never, delete: never }
    const h = harness(runtime, { durable: { store: stalled, storeWaitMs: 200 } })
    const lost = await h.runCode(`return await tools.write({ key: 'k' })`)
    expect(lost.isError).toBe(true)
    expect(text(lost)).toMatch(/could not be stored \(the store did not answer within 200 ms\); it is lost/)

    // A file store whose take answers only after the resume gave up on it: the state is put back.
    const files = store()
    let release: (() => void) | undefined
    let tookLate = false
    let putBack!: () => void
    const back = new Promise<void>((resolve) => (putBack = resolve))
    const slow: SessionStore = {
      get: (key) => files.get(key),
      set: async (key, bytes, options) => {
        await files.set(key, bytes, options)
        if (tookLate) putBack()
      },
      delete: (key) => files.delete(key),
      take: async (key) => {
        await new Promise<void>((resolve) => (release = resolve))
        const bytes = await files.take?.(key)
        tookLate = bytes !== undefined
        return bytes
      },
    }
    // Its set is the file store's own, real I/O: the bound leaves it room on a loaded machine (the take waits
    // for the test, so the resume below always waits the whole bound).
    const s = harness(runtime, { durable: { store: slow, storeWaitMs: 3000 } })
    const first = await s.runCode(`return await tools.write({ key: 'later' })`)
    const { token } = awaiting(first)
    await expect(resume(s, token, 'allowed-once')).rejects.toMatchObject({
      name: 'ResumeError',
      code: 'STORE_UNAVAILABLE',
    })
    expect(s.trace).toEqual([])
    release?.()
    // The late take took the state out of the files, then gave it back.
    await back
    expect(tookLate).toBe(true)
    expect(await files.get(token)).toBeDefined()
    const again = harness(runtime, { durable: { store: files } })
    const resumed = await again.tools.resume({
      token,
      decision: 'allowed-once',
      agent: s.agent,
      signal: new AbortController().signal,
    })
    expect(value(resumed.results[0]?.result as { value?: unknown }).result).toEqual({ written: 'later' })
  })
})

test('durable approval needs a runtime that suspends runs', () => {
  const runtime = {
    name: 'fake',
    limits: createQuickJSRuntime({ prewarm: false }).limits,
    run: async () => ({ logs: [], stats: { cpuMs: 0, wallMs: 0, queueMs: 0, subCalls: 0 } }),
    dispose: async () => {},
  } as unknown as CodeRuntime
  expect(() => createPtcExecutor({ runtime, durable: { store: store() } })).toThrow(
    /needs a runtime that suspends runs \(QuickJS\); the fake runtime does not/,
  )
})

test('a runtime whose resumeRun never answers: the resume is given up after the wall ceiling and a grace, as a timeout', async () => {
  const real = createQuickJSRuntime({ isolation: 'inline' })
  try {
    // The real runtime suspends the program; its resumption then hangs (a backend fault).
    const runtime = {
      name: real.name,
      limits: { ...real.limits, wallMs: 200 },
      run: (request: Parameters<CodeRuntime['run']>[0]) => real.run(request),
      openRun: (token: string, bytes: Uint8Array) => real.openRun?.(token, bytes),
      resumeRun: () => new Promise<never>(() => undefined),
      dispose: () => real.dispose(),
    } as unknown as CodeRuntime
    const h = harness(runtime, { durable: { store: store() } })
    const first = await h.runCode(`return await tools.write({ key: 'k' })`)
    const result = (await resume(h, awaiting(first).token, 'allowed-once')).results[0]?.result
    expect(result?.isError).toBe(true)
    expect(text(result as ToolExecutionResult)).toContain(
      `the run did not end by its wall limit (at most 200 ms): the quickjs sandbox runtime had not answered ${RUNTIME_ANSWER_GRACE_MS} ms after that, and the run was given up`,
    )
    expect(h.trace).toEqual([])
  } finally {
    await real.dispose()
  }
}, 30_000)
