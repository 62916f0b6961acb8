/**
 * Durable runs in sandbox sessions (real QuickJS engines, both isolations): a session run that suspends holds
 * its session for its resume, which gives the session the state the run leaves; the session runs no other
 * program and cannot be ended meanwhile, and goes on from its state before the run once the hold ends
 * unresumed. Across runtimes sharing a store (a real file store with claims, and a real Redis: redis-server on
 * loopback, skipped with the reason when it cannot be had), the hold is a claim the resuming runtime takes over.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createRequire } from 'node:module'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { ensureRedisServer, startRedis, type RedisServer } from '../../../scripts/ensure-redis.js'
import type { CodeRunRequest, CodeRunResult, CodeRuntime, JsonValue } from '@ptc/sandbox'
import {
  SessionStoreError,
  createFileSessionStore,
  createRedisSessionStore,
  parkCall,
  type DurableRun,
  type SessionStore,
} from '@ptc/sandbox/session'
import { createQuickJSRuntime } from './index.js'

const secret = 'durable-session-secret-0123456789'
const dir = mkdtempSync(join(tmpdir(), 'ptc-durable-session-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

/** A session run whose `ask` calls park (durable under `key`) and whose `read` calls answer `{ n }`. */
function request(code: string, durable?: DurableRun, session = 's'): CodeRunRequest {
  return {
    code,
    session,
    language: 'javascript',
    bindings: ['read', 'ask'],
    call: async (name, args): Promise<JsonValue> => {
      if (name === 'ask') throw parkCall({ asked: args })
      return { n: (args as { n: number }).n }
    },
    ...(durable !== undefined && { durable }),
  }
}

async function resume(
  rt: CodeRuntime,
  first: CodeRunResult,
  key: string,
  answer: () => Promise<JsonValue>,
): Promise<CodeRunResult> {
  const state = first.suspended?.state
  if (state === undefined) throw new Error(`the run did not suspend: ${JSON.stringify(first.error ?? first.value)}`)
  const opened = await (rt.openRun as NonNullable<CodeRuntime['openRun']>)(key, state)
  return (rt.resumeRun as NonNullable<CodeRuntime['resumeRun']>)(opened, { call: answer })
}

/** `inner` whose claims fail (as a dropped connection) while `fails` says so for the claim's holder and the holder it replaces. */
function failingClaims(
  inner: SessionStore,
  fails: (holder: string, replaces: string | undefined) => boolean,
): SessionStore {
  return {
    get: (key) => inner.get(key),
    set: (key, bytes, options) => inner.set(key, bytes, options),
    delete: (key) => inner.delete(key),
    claim: async (key, holder, ttlMs, options) => {
      if (fails(holder, options?.replaces)) throw new Error('ECONNRESET')
      return (inner.claim as NonNullable<SessionStore['claim']>)(key, holder, ttlMs, options)
    },
    release: (key, holder) => (inner.release as NonNullable<SessionStore['release']>)(key, holder),
  }
}

/** Runs `code` in the session until it is taken (the hold ended), at most 10 s. */
async function runOnceFree(rt: CodeRuntime, code: string, session = 's'): Promise<CodeRunResult> {
  const until = Date.now() + 10_000
  for (;;) {
    const result = await rt.run(request(code, undefined, session))
    if (result.error?.kind !== 'limit' || Date.now() > until) return result
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}

describe.each(['worker', 'inline'] as const)('durable runs in a session (%s)', (isolation) => {
  const runtime = createQuickJSRuntime({ isolation, poolSize: 2, secret, sessions: {} })
  afterAll(() => runtime.dispose())

  test("a suspended session run holds its session; its resume goes on with the session's state and leaves the session its own", async () => {
    expect((await runtime.run(request('let a = 1; globalThis.tag = "x"; return a', undefined, 'keep'))).value).toBe(1)
    const saved = (await runtime.suspendSession?.('keep')) as Uint8Array
    await runtime.resumeSession?.('keep', saved)
    const first = await runtime.run(
      request(
        'a += 1; const r = await tools.read({ n: 5 }); globalThis.got = await tools.ask({ a }); return [a, r.n, got]',
        { key: 'k1' },
        'keep',
      ),
    )
    expect(first.error).toBeUndefined()
    expect(first.suspended?.parked).toEqual([{ name: 'ask', args: { a: 2 }, detail: { asked: { a: 2 } } }])
    expect(first.session).toMatchObject({ key: 'keep', kept: false, runs: 1 })
    expect(first.session?.note).toMatch(/suspended: the session waits for its resume/)
    // Held: no other program of the session runs, and it cannot be ended.
    const refused = await runtime.run(request('return a', undefined, 'keep'))
    expect(refused.error?.kind).toBe('limit')
    expect(refused.error?.message).toMatch(
      /^session "keep" waits for the resume of a program of it that suspended \(durable approval\)/,
    )
    await expect(runtime.endSession?.('keep')).rejects.toMatchObject({ code: 'claimed' })
    await expect(runtime.resumeSession?.('keep', saved)).rejects.toMatchObject({ code: 'claimed' })
    await expect(runtime.suspendSession?.('keep')).rejects.toThrow(
      /waits for the resume .*: it cannot be suspended now/,
    )
    // Other sessions run meanwhile.
    expect((await runtime.run(request('let a = 100; return a', undefined, 'other'))).value).toBe(100)
    const done = await resume(runtime, first, 'k1', async () => 'granted')
    expect(done.error).toBeUndefined()
    expect(done.value).toEqual([2, 5, 'granted'])
    expect(done.session).toMatchObject({ key: 'keep', kept: true, fresh: false, runs: 2 })
    // The session's state is the resumed run's: its declarations, its globals and those from before.
    expect((await runtime.run(request('return [a, tag, got]', undefined, 'keep'))).value).toEqual([2, 'x', 'granted'])
    expect(await runtime.endSession?.('keep')).toBe(true)
  })

  test('a session program that waits on a parked call with more state than a session may keep cannot suspend: the session keeps its state', async () => {
    await using small = createQuickJSRuntime({
      isolation,
      poolSize: 1,
      secret,
      sessions: { maxSessionBytes: 2_000_000 },
    })
    expect((await small.run(request('let mark = "before"; return mark', undefined, 'big'))).value).toBe('before')
    const first = await small.run(
      request(
        'mark = "during"; globalThis.junk = "x".repeat(4_000_000); return await tools.ask({})',
        { key: 'big-run' },
        'big',
      ),
    )
    expect(first.suspended).toBeUndefined()
    expect(first.error?.kind).toBe('limit')
    expect(first.error?.message).toMatch(
      /over the 2000000-byte budget of a suspended run \(maxSessionBytes\): it cannot suspend/,
    )
    expect(first.session?.kept).toBe(false)
    // Not held: the session runs on from its state before that program.
    expect((await small.run(request('return [mark, typeof junk]', undefined, 'big'))).value).toEqual([
      'before',
      'undefined',
    ])
  })

  test('a dropped run (dropRun) ends its hold: the session goes on from its state before it', async () => {
    expect((await runtime.run(request('let d = 1; return d', undefined, 'drop'))).value).toBe(1)
    const first = await runtime.run(request('d = 2; return await tools.ask({})', { key: 'k6' }, 'drop'))
    const opened = await (runtime.openRun as NonNullable<CodeRuntime['openRun']>)(
      'k6',
      first.suspended?.state as Uint8Array,
    )
    await runtime.dropRun?.(opened)
    await expect(runtime.resumeRun?.(opened, { call: async () => 1 })).rejects.toThrow(
      /takes a run from this runtime's openRun, once/,
    )
    const next = await runtime.run(request('return d', undefined, 'drop'))
    expect(next.value).toBe(1)
    expect(next.session?.note).toMatch(/was dropped without being resumed/)
  })

  test('a resume that does not go on (refused at a full gate, aborted) holds the session no more; it goes on from before the run', async () => {
    await using gated = createQuickJSRuntime({
      isolation,
      poolSize: 1,
      secret,
      sessions: {},
      maxConcurrentRuns: 1,
      maxQueuedRuns: 0,
    })
    expect((await gated.run(request('let g = "before"; return g', undefined, 'gated'))).value).toBe('before')
    const first = await gated.run(request('g = "during"; return await tools.ask({})', { key: 'k7' }, 'gated'))
    // The one place is taken while the resume comes: it is refused, and its state is gone with it.
    let release!: () => void
    let called!: () => void
    const gate = new Promise<void>((resolve) => (release = resolve))
    const calling = new Promise<void>((resolve) => (called = resolve))
    const busy = gated.run({
      ...request('return await tools.read({ n: 1 })', undefined, 'other'),
      call: async () => (called(), await gate, { n: 1 }),
    })
    await calling
    const refused = await resume(gated, first, 'k7', async () => 'never')
    expect(refused.error?.kind).toBe('limit')
    release()
    await busy
    expect((await gated.run(request('return g', undefined, 'gated'))).value).toBe('before')
    // Aborted before it went on: the same.
    const second = await gated.run(request('g = "again"; return await tools.ask({})', { key: 'k8' }, 'gated'))
    const opened = await (gated.openRun as NonNullable<CodeRuntime['openRun']>)(
      'k8',
      second.suspended?.state as Uint8Array,
    )
    const aborted = await (gated.resumeRun as NonNullable<CodeRuntime['resumeRun']>)(opened, {
      call: async () => 'x',
      signal: AbortSignal.abort(),
    })
    expect(aborted.error?.kind).toBe('abort')
    expect((await gated.run(request('return g', undefined, 'gated'))).value).toBe('before')
  })

  test('sessions held for a resume count as live: at the cap, a new session is told so', async () => {
    await using small = createQuickJSRuntime({ isolation, poolSize: 1, secret, sessions: { maxSessions: 1 } })
    const first = await small.run(request('let h = 1; return await tools.ask({})', { key: 'cap' }, 'held'))
    expect(first.suspended).toBeDefined()
    expect((await small.run(request('return 2', undefined, 'new'))).error?.message).toBe(
      'all 1 sessions are running programs (1 of them wait for the resume of a program that suspended) (maxSessions)',
    )
    expect((await resume(small, first, 'cap', async () => 'y')).value).toBe('y')
    expect((await small.run(request('return 2', undefined, 'new'))).value).toBe(2)
  })

  test('a rejection on resume reaches the program, and the session keeps what the program did after it', async () => {
    const first = await runtime.run(
      request(
        'let tried = 0; try { tried++; await tools.ask({}) } catch (e) { globalThis.why = e.code } return tried',
        { key: 'k2' },
        'deny',
      ),
    )
    const done = await resume(runtime, first, 'k2', async () => {
      throw Object.assign(new Error('the user rejected this call'), { code: 'DENIED' })
    })
    expect(done.value).toBe(1)
    expect(done.session?.kept).toBe(true)
    expect((await runtime.run(request('return [tried, why]', undefined, 'deny'))).value).toEqual([1, 'DENIED'])
  })

  test('a run that parks again after its resume holds the session again, under its new key', async () => {
    const first = await runtime.run(
      request(
        'let steps = ["a"]; steps.push(await tools.ask({ i: 1 })); steps.push(await tools.ask({ i: 2 })); return steps',
        { key: 'k3' },
        'twice',
      ),
    )
    const opened = await (runtime.openRun as NonNullable<CodeRuntime['openRun']>)(
      'k3',
      first.suspended?.state as Uint8Array,
    )
    const second = await (runtime.resumeRun as NonNullable<CodeRuntime['resumeRun']>)(opened, {
      call: async (_name, args) => {
        if ((args as { i: number }).i === 1) return 'one'
        throw parkCall()
      },
      durable: { key: 'k3b' },
    })
    expect(second.suspended?.parked).toMatchObject([{ name: 'ask', args: { i: 2 } }])
    expect(second.session?.kept).toBe(false)
    expect((await runtime.run(request('return steps', undefined, 'twice'))).error?.message).toMatch(
      /waits for the resume/,
    )
    const done = await resume(runtime, second, 'k3b', async () => 'two')
    expect(done.value).toEqual(['a', 'one', 'two'])
    expect((await runtime.run(request('return steps.length', undefined, 'twice'))).value).toBe(3)
  })

  test('unresumed past its hold, the session goes on from its state before the run; a late resume runs without it', async () => {
    expect((await runtime.run(request('let v = "before"; return v', undefined, 'late'))).value).toBe('before')
    const first = await runtime.run(
      request('v = "during"; return await tools.ask({})', { key: 'k4', holdMs: 200 }, 'late'),
    )
    expect(first.suspended).toBeDefined()
    const next = await runOnceFree(runtime, 'return v', 'late')
    expect(next.value).toBe('before')
    expect(next.session?.note).toMatch(
      /was not resumed within its hold: the session went on from its state before that program/,
    )
    const done = await resume(runtime, first, 'k4', async () => 'late answer')
    expect(done.value).toBe('late answer')
    expect(done.session).toMatchObject({ key: 'late', kept: false })
    expect(done.session?.note).toMatch(/^session "late" went on without this program/)
    expect((await runtime.run(request('return v', undefined, 'late'))).value).toBe('before')
  })

  test('a session ended during the run that suspends is not held', async () => {
    let release!: () => void
    let called!: () => void
    const gate = new Promise<void>((resolve) => (release = resolve))
    const calling = new Promise<void>((resolve) => (called = resolve))
    const slow = {
      ...request('let z = await tools.read({ n: 1 }); return await tools.ask({})', { key: 'k5' }, 'ended'),
    }
    const pending = runtime.run({
      ...slow,
      call: async (name, args) => {
        if (name === 'ask') throw parkCall()
        called()
        await gate
        return args
      },
    })
    // The run holds the session: ended while it runs, its state is not kept and nothing holds the session after.
    await calling
    expect(await runtime.endSession?.('ended')).toBe(true)
    release()
    const first = await pending
    expect(first.suspended).toBeDefined()
    expect(first.session?.note).toBe('the session was ended during the run')
    expect((await runtime.run(request('return typeof z', undefined, 'ended'))).value).toBe('undefined')
  })
})

const redisLookup = ensureRedisServer()
if ('reason' in redisLookup) console.warn(`durable session runs over Redis skipped: ${redisLookup.reason}`)

describe.each([
  ['a file store', false],
  ['Redis', true],
] as const)('durable session runs across runtimes sharing %s (with claims)', (_name, redis) => {
  describe.skipIf(redis && 'reason' in redisLookup)('', () => {
    let server: RedisServer | undefined
    let client: import('ioredis').Redis | undefined
    beforeAll(async () => {
      if (!redis || !('path' in redisLookup)) return
      server = await startRedis(redisLookup.path)
      const { Redis } = createRequire(import.meta.url)('ioredis') as typeof import('ioredis')
      client = new Redis({ host: '127.0.0.1', port: server.port, password: server.password })
    }, 30_000)
    afterAll(async () => {
      await client?.quit()
      await server?.stop()
    })
    /** A store of its own for one test: a folder, or a key prefix in Redis. */
    function storeFor(name: string): SessionStore {
      if (!redis) return createFileSessionStore({ directory: join(dir, name) })
      return createRedisSessionStore({
        client: client as NonNullable<typeof client>,
        prefix: `ptc-test:${name}:`,
        claimPrefix: `ptc-test-claim:${name}:`,
      })
    }
    function runtimeOver(store: SessionStore) {
      return createQuickJSRuntime({ isolation: 'inline', secret, sessions: { store, secret } })
    }

    test('the hold is a claim in the store: no runtime runs the session until one resumes the run, which then holds it', async () => {
      const store = storeFor('hold')
      const one = runtimeOver(store)
      await using two = runtimeOver(store)
      expect((await one.run(request('let list = [1]; return list.length'))).value).toBe(1)
      const first = await one.run(request('list.push(2); list.push(await tools.ask({})); return list', { key: 'x1' }))
      expect(first.suspended).toBeDefined()
      // Neither runtime runs it now, whichever tries.
      for (const rt of [one, two]) {
        const refused = await rt.run(request('return list'))
        expect(refused.error?.kind).toBe('limit')
        expect(refused.error?.message).toMatch(/^session "s" waits for the resume of a program of it that suspended/)
      }
      const error: unknown = await two.endSession?.('s').catch((thrown: unknown) => thrown)
      expect(error).toBeInstanceOf(SessionStoreError)
      expect(error).toMatchObject({ code: 'claimed' })
      // The first runtime goes away; the second resumes the run and holds the session after it.
      await one.dispose()
      const done = await resume(two, first, 'x1', async () => 3)
      expect(done.value).toEqual([1, 2, 3])
      expect(done.session).toMatchObject({ kept: true, runs: 2 })
      expect((await two.run(request('list.push(4); return list'))).value).toEqual([1, 2, 3, 4])
    }, 30_000)

    test('a runtime without the store (in-memory sessions, the same secret) refuses to resume the run, having run nothing; one with it goes on', async () => {
      const store = storeFor('elsewhere')
      await using one = runtimeOver(store)
      await using bare = createQuickJSRuntime({ isolation: 'inline', secret, sessions: {} })
      expect((await one.run(request('let w = ["a"]; return w.length'))).value).toBe(1)
      const first = await one.run(request('w.push(await tools.ask({})); return w', { key: 'x9' }))
      const state = first.suspended?.state as Uint8Array
      // Resumed there, it would take a session of that runtime's own, and the store's would stay held for it.
      const opened = await (bare.openRun as NonNullable<CodeRuntime['openRun']>)('x9', state)
      const refused: unknown = await (bare.resumeRun as NonNullable<CodeRuntime['resumeRun']>)(opened, {
        call: async () => 'b',
      }).catch((thrown: unknown) => thrown)
      expect(refused).toMatchObject({
        name: 'SandboxUsageError',
        message:
          'this program ran in sandbox session "s", which waits for it in a session store: resume it on a runtime with that store (sessions.store); nothing ran',
      })
      expect((await bare.run(request('return typeof w'))).value).toBe('undefined')
      expect((await one.run(request('return w'))).error?.message).toMatch(/waits for the resume/)
      const done = await resume(one, first, 'x9', async () => 'b')
      expect(done.value).toEqual(['a', 'b'])
      expect((await one.run(request('return w'))).value).toEqual(['a', 'b'])
    }, 30_000)

    test('a dropped run ends its hold in the store: another runtime runs the session from its state before the run', async () => {
      const store = storeFor('drop')
      await using one = runtimeOver(store)
      await using two = runtimeOver(store)
      expect((await one.run(request('let e = "saved"; return e'))).value).toBe('saved')
      const first = await one.run(request('e = "lost"; return await tools.ask({})', { key: 'x5' }))
      expect((await two.run(request('return e'))).error?.message).toMatch(/waits for the resume/)
      const opened = await (two.openRun as NonNullable<CodeRuntime['openRun']>)(
        'x5',
        first.suspended?.state as Uint8Array,
      )
      await two.dropRun?.(opened)
      expect((await two.run(request('return e'))).value).toBe('saved')
    }, 30_000)

    test('a store that fails to give a resume its session: resumeRun throws unavailable having run nothing, the session stays held; retried, it goes on', async () => {
      let failing = false
      const flaky = failingClaims(
        storeFor('flaky-resume'),
        (_holder, replaces) => failing && replaces?.startsWith('parked:') === true,
      )
      await using one = runtimeOver(flaky)
      await using two = runtimeOver(flaky)
      expect((await one.run(request('let r = 1; return r'))).value).toBe(1)
      const first = await one.run(request('r = 2; return await tools.ask({})', { key: 'x7' }))
      failing = true
      const opened = await (two.openRun as NonNullable<CodeRuntime['openRun']>)(
        'x7',
        first.suspended?.state as Uint8Array,
      )
      let asked = 0
      const refused: unknown = await (two.resumeRun as NonNullable<CodeRuntime['resumeRun']>)(opened, {
        call: async () => (asked++, 'y'),
      }).catch((thrown: unknown) => thrown)
      expect(refused).toBeInstanceOf(SessionStoreError)
      expect(refused).toMatchObject({
        code: 'unavailable',
        message: expect.stringMatching(
          /failed to claim session "s" for this process \(ECONNRESET\): the run did not go on, and the session is still held for it$/,
        ) as unknown,
      })
      expect(asked).toBe(0)
      expect((await one.run(request('return r'))).error?.message).toMatch(/waits for the resume/)
      failing = false
      const done = await resume(two, first, 'x7', async () => 'y')
      expect(done.value).toBe('y')
      expect(done.session?.kept).toBe(true)
      expect((await two.run(request('return r'))).value).toBe(2)
    }, 30_000)

    test('a resume in another runtime that ends without state leaves the session its state from before the run', async () => {
      const store = storeFor('bare')
      await using one = runtimeOver(store)
      await using two = runtimeOver(store)
      expect((await one.run(request('let f = "saved"; return f'))).value).toBe('saved')
      const first = await one.run(request('f = "lost"; return await tools.ask({})', { key: 'x6' }))
      const opened = await (two.openRun as NonNullable<CodeRuntime['openRun']>)(
        'x6',
        first.suspended?.state as Uint8Array,
      )
      const aborted = await (two.resumeRun as NonNullable<CodeRuntime['resumeRun']>)(opened, {
        call: async () => 'x',
        signal: AbortSignal.abort(),
      })
      expect(aborted.error?.kind).toBe('abort')
      expect((await two.run(request('return f'))).value).toBe('saved')
      expect((await one.run(request('return f'))).error?.message).toMatch(/held by another process/)
    }, 30_000)

    test('a resume finds its session even when every other session is running (maxSessions)', async () => {
      const store = storeFor('full')
      await using rt = createQuickJSRuntime({
        isolation: 'inline',
        secret,
        sessions: { store, secret, maxSessions: 1 },
      })
      const first = await rt.run(request('let kept = "mine"; return await tools.ask({})', { key: 'x3' }, 'parked'))
      expect(first.suspended).toBeDefined()
      // The only place is taken by a session whose program waits on a call while the resume comes.
      let release!: () => void
      let called!: () => void
      const gate = new Promise<void>((resolve) => (release = resolve))
      const calling = new Promise<void>((resolve) => (called = resolve))
      const busy = rt.run({
        ...request('return await tools.read({ n: 1 })', undefined, 'busy'),
        call: async () => (called(), await gate, { n: 1 }),
      })
      await calling
      expect((await rt.run(request('return 1', undefined, 'third'))).error?.message).toMatch(
        /all 1 sessions are running programs/,
      )
      const done = await resume(rt, first, 'x3', async () => 'answered')
      release()
      expect((await busy).value).toEqual({ n: 1 })
      expect(done.value).toBe('answered')
      expect(done.session?.kept).toBe(true)
      expect((await rt.run(request('return kept', undefined, 'parked'))).value).toBe('mine')
    }, 30_000)

    test("a store that fails to take the hold: the suspended program's result says another process may run the session meanwhile", async () => {
      await using rt = runtimeOver(failingClaims(storeFor('no-hold'), (holder) => holder.startsWith('parked:')))
      const first = await rt.run(request('let q = 1; return await tools.ask({})', { key: 'x4' }))
      expect(first.suspended).toBeDefined()
      expect(first.session?.note).toMatch(
        /the session waits for its resume.*; but the session store did not confirm the hold: another process may run the session meanwhile$/,
      )
      // The resume still goes on, and keeps its state (nobody took the session meanwhile).
      const done = await resume(rt, first, 'x4', async () => 'ok')
      expect(done.value).toBe('ok')
      expect(done.session?.kept).toBe(true)
    }, 30_000)

    test('three runtimes running two sessions at once, a third of the programs suspending and resumed by any runtime: no session forks', async () => {
      const store = storeFor('hammer')
      const runtimes = [0, 1, 2].map(() =>
        createQuickJSRuntime({ isolation: 'inline', secret, sessions: { store, secret, suspendAfterMs: 30 } }),
      )
      try {
        // Every program appends its tag to its session's list; what the session keeps must be exactly the tags of
        // the programs whose state it kept, in the order they ended.
        const kept = new Map<string, string[]>([
          ['h0', []],
          ['h1', []],
        ])
        const pending: { token: string; result: CodeRunResult; session: string; tag: string }[] = []
        let refusals = 0
        // mulberry32: the same sequence of choices every run (the interleaving of the runtimes still varies).
        let seed = 7
        const random = (n: number): number => {
          seed = (seed + 0x6d2b79f5) | 0
          let t = Math.imul(seed ^ (seed >>> 15), 1 | seed)
          t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
          return Math.floor((((t ^ (t >>> 14)) >>> 0) / 2 ** 32) * n)
        }
        const ended = (session: string, tag: string, result: CodeRunResult, resumed = false): void => {
          if (result.error !== undefined) throw new Error(`${tag}: ${result.error.message}`)
          // No hold ends here (they last days): a resumed program's state is always its session's.
          if (resumed) expect(result.session, tag).toMatchObject({ kept: true })
          if (result.session?.kept === true) kept.get(session)?.push(tag)
        }
        const step = async (i: number): Promise<void> => {
          const runtime = runtimes[random(3)] as CodeRuntime
          if (pending.length > 0 && random(2) === 0) {
            const next = pending.shift() as (typeof pending)[number]
            const done = await resume(runtime, next.result, next.token, async () => true)
            ended(next.session, next.tag, done, true)
            return
          }
          const session = `h${random(2)}`
          const tag = `t${i}`
          const parks = random(3) === 0
          const code = `globalThis.tags ??= []; ${parks ? 'await tools.ask({}); ' : ''}tags.push(${JSON.stringify(tag)}); return tags.length`
          const result = await runtime.run(request(code, parks ? { key: `hammer-${i}` } : undefined, session))
          if (
            result.error?.kind === 'limit' &&
            /held by another process|waits for the resume|running another program/.test(result.error.message)
          ) {
            refusals++
            return
          }
          if (result.suspended !== undefined) pending.push({ token: `hammer-${i}`, result, session, tag })
          else ended(session, tag, result)
        }
        // Two steps at a time, sixty in all, then every suspended program resumed.
        for (let i = 0; i < 60; i += 2) await Promise.all([step(i), step(i + 1)])
        while (pending.length > 0) {
          const next = pending.shift() as (typeof pending)[number]
          ended(
            next.session,
            next.tag,
            await resume(runtimes[random(3)] as CodeRuntime, next.result, next.token, async () => true),
            true,
          )
        }
        for (const [session, tags] of kept) {
          const final = await runOnceFree(runtimes[0] as CodeRuntime, 'return globalThis.tags ?? []', session)
          expect(final.value, session).toEqual(tags)
        }
        expect(refusals).toBeGreaterThan(0)
      } finally {
        await Promise.all(runtimes.map((r) => r.dispose()))
      }
    }, 60_000)

    test('a hold that ends unresumed frees the session, which goes on from the state saved before the run', async () => {
      const store = storeFor('expire')
      await using one = runtimeOver(store)
      await using two = runtimeOver(store)
      expect((await one.run(request('let w = "saved"; return w'))).value).toBe('saved')
      const first = await one.run(request('w = "lost"; return await tools.ask({})', { key: 'x2', holdMs: 300 }))
      expect(first.suspended).toBeDefined()
      const next = await runOnceFree(two, 'return w')
      expect(next.value).toBe('saved')
      // The late resume runs (its decision is honoured) but does not go over the session the other runtime holds.
      const done = await resume(one, first, 'x2', async () => 'late')
      expect(done.value).toBe('late')
      expect(done.session?.kept).toBe(false)
      expect(done.session?.note).toMatch(/another process sharing the session store holds it now/)
      expect((await two.run(request('return w'))).value).toBe('saved')
    }, 30_000)
  })
})
