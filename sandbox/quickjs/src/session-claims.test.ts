/**
 * Runtimes sharing a session store with claims (real QuickJS engines, a real file store; the processes of
 * session-replicas.test.ts, here runtimes in one process, each with its own claim holder): a session one holds
 * is refused by the others, moves by hand once suspended, and a store that cannot be read refuses the run.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, expect, test } from 'vitest'
import type { CodeRunRequest, JsonValue } from '@ptc/sandbox'
import { SessionStoreError, createFileSessionStore, type SessionStore } from '@ptc/sandbox/session'
import { createQuickJSRuntime } from './index.js'

const dir = mkdtempSync(join(tmpdir(), 'ptc-session-claims-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))
const secret = 'a secret of at least 16 bytes, the same in every runtime'

function request(code: string, session: string): CodeRunRequest {
  return { code, session, bindings: [], call: async (): Promise<JsonValue> => null, language: 'javascript' }
}

function runtimeOver(store: SessionStore) {
  return createQuickJSRuntime({ isolation: 'inline', sessions: { store, secret } })
}

test('a session one runtime holds is refused by another sharing the store; suspended by hand, it resumes there; resuming into a held session throws claimed', async () => {
  const store = createFileSessionStore({ directory: join(dir, 'shared') })
  await using one = runtimeOver(store)
  await using two = runtimeOver(store)
  expect((await one.run(request('globalThis.n = 1; return n', 's'))).value).toBe(1)
  const refused = await two.run(request('globalThis.n = 100; return n', 's'))
  expect(refused.error?.kind).toBe('limit')
  expect(refused.error?.message).toMatch(
    /^session "s" is held by another process sharing the session store \(its claim runs out in \d+ s unless renewed; .*\): this program did not run, and the session's state is unchanged/,
  )
  expect((await one.run(request('return ++n', 's'))).value).toBe(2)
  // Resuming bytes into a key another runtime holds is refused too, and changes nothing there.
  const other = await one.run(request('globalThis.m = 7; return m', 'other'))
  expect(other.value).toBe(7)
  const bytes = (await one.suspendSession?.('other')) as Uint8Array
  expect((await one.run(request('globalThis.m = 8; return m', 'other'))).value).toBe(8)
  const error: unknown = await two.resumeSession?.('other', bytes).catch((thrown: unknown) => thrown)
  expect(error).toBeInstanceOf(SessionStoreError)
  expect(error).toMatchObject({ code: 'claimed' })
  // Suspended by hand, the session's claim ends with it: the other runtime resumes it and runs on.
  const moved = (await one.suspendSession?.('s')) as Uint8Array
  await two.resumeSession?.('s', moved)
  expect((await two.run(request('return ++n', 's'))).value).toBe(3)
  expect((await one.run(request('return typeof n', 's'))).error?.kind).toBe('limit')
}, 30_000)

test('a store that fails to read a session refuses its run, and its saved state is neither started over nor saved over', async () => {
  const inner = createFileSessionStore({ directory: join(dir, 'flaky') })
  let failing = false
  const flaky: SessionStore = {
    get: async (key) => {
      if (failing) throw new Error('ECONNRESET')
      return inner.get(key)
    },
    set: (key, bytes, options) => inner.set(key, bytes, options),
    delete: (key) => inner.delete(key),
    claim: (key, holder, ttlMs) => inner.claim!(key, holder, ttlMs),
    release: (key, holder) => inner.release!(key, holder),
  }
  {
    await using first = runtimeOver(flaky)
    expect((await first.run(request('globalThis.kept = "state"; return kept', 'k'))).value).toBe('state')
  }
  await using second = runtimeOver(flaky)
  failing = true
  const refused = await second.run(request('globalThis.kept = "overwritten"; return kept', 'k'))
  expect(refused.error).toEqual({
    kind: 'limit',
    message:
      'the session store failed to read session "k": ECONNRESET; the program did not run, and the session\'s saved state is as it was',
  })
  failing = false
  expect((await second.run(request('return kept', 'k'))).value).toBe('state')
}, 30_000)

test('sessions.claimMs sets how long a claim lasts past its run; a bad one is refused', async () => {
  const store = createFileSessionStore({ directory: join(dir, 'claim-ms') })
  await using runtime = createQuickJSRuntime({ isolation: 'inline', sessions: { store, secret, claimMs: 1000 } })
  const run = await runtime.run({ ...request('return 1', 'short'), limits: { wallMs: 1000 } })
  expect(run.value).toBe(1)
  const other = await store.claim?.('short', 'someone-else', 1000)
  expect(other?.expiresInMs).toBeGreaterThan(0)
  expect(other?.expiresInMs).toBeLessThanOrEqual(2000) // its run's wall and claimMs: far below the default 30 s
  for (const claimMs of [0, 999, -1, Number.NaN, Number.POSITIVE_INFINITY]) {
    expect(() => createQuickJSRuntime({ isolation: 'inline', sessions: { store, secret, claimMs } })).toThrow(
      /sessions\.claimMs must be a number of milliseconds from 1000 to/,
    )
  }
})

test("suspendSession removes the store's older copy of the session: a later run of the key starts fresh, the bytes hold the session", async () => {
  const inner = createFileSessionStore({ directory: join(dir, 'suspend') })
  let removing: 'answer' | 'fail' = 'answer'
  const store: SessionStore = {
    get: (key) => inner.get(key),
    set: (key, bytes, options) => inner.set(key, bytes, options),
    delete: async (key) => {
      if (removing === 'fail') throw new Error('ECONNRESET')
      return inner.delete(key)
    },
    claim: (key, holder, ttlMs, options) => inner.claim!(key, holder, ttlMs, options),
    release: (key, holder) => inner.release!(key, holder),
  }
  {
    // The session's first state goes to the store when its runtime closes.
    await using first = runtimeOver(store)
    expect((await first.run(request('globalThis.n = 1; return n', 'k'))).value).toBe(1)
  }
  await using second = runtimeOver(store)
  expect((await second.run(request('return ++n', 'k'))).value).toBe(2)
  // The store fails to remove its copy: nothing is suspended, the session runs on here.
  removing = 'fail'
  const error: unknown = await second.suspendSession?.('k').catch((thrown: unknown) => thrown)
  expect(error).toBeInstanceOf(SessionStoreError)
  expect(error).toMatchObject({
    code: 'unavailable',
    message:
      'the session store failed (ECONNRESET) when its older copy of session "k" was to be removed: the session was not suspended, and stays here as it was',
  })
  expect((await second.run(request('return ++n', 'k'))).value).toBe(3)
  removing = 'answer'
  const bytes = (await second.suspendSession?.('k')) as Uint8Array
  expect(await inner.get('k')).toBeUndefined()
  // Neither this runtime nor another sharing the store goes on from the older state (n = 1).
  expect((await second.run(request('return typeof n', 'k'))).value).toBe('undefined')
  await second.endSession?.('k')
  await using third = runtimeOver(store)
  expect((await third.run(request('return typeof n', 'k'))).value).toBe('undefined')
  await third.endSession?.('k')
  await third.resumeSession?.('k', bytes)
  expect((await third.run(request('return ++n', 'k'))).value).toBe(4)
}, 30_000)
