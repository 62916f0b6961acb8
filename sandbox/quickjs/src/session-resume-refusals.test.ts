/**
 * What `resumeSession` refuses, changing nothing: authentic bytes of a session over this runtime's
 * `maxSessionBytes` (the host's bound of `maxSessions` x `maxSessionBytes` holds for resumed sessions too),
 * and the state of a suspended run (a run is no session) — both as `SnapshotError`. And a program's runtime
 * error after it froze `globalThis` stays an `exception` in a session, as outside one.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, test } from 'vitest'
import type { CodeRunRequest } from '@ptc/sandbox'
import { createFileSessionStore, parkCall, SnapshotError } from '@ptc/sandbox/session'
import { createQuickJSRuntime } from './index.js'

const secret = 'session-refusals-secret-0123456789abcdef'
const MIB = 1024 * 1024
/** A session program that leaves about 12 MB of state. */
const LARGE = `globalThis.rows = 'x'.repeat(${12 * MIB}) + 'y'`

const request = (code: string, extra: Partial<CodeRunRequest> = {}): CodeRunRequest => ({
  code,
  language: 'javascript',
  bindings: ['ask'],
  call: async () => {
    throw parkCall()
  },
  ...extra,
})

describe.each(['worker', 'inline'] as const)('resumeSession refusals (%s)', (isolation) => {
  const big = createQuickJSRuntime({ isolation, poolSize: 1, secret })
  const small = createQuickJSRuntime({ isolation, poolSize: 1, secret, sessions: { maxSessionBytes: 4 * MIB } })
  afterAll(() => Promise.all([big.dispose(), small.dispose()]))

  test('authentic bytes of a session over maxSessionBytes are refused as SnapshotError, changing nothing', async () => {
    // About 12 MB of state, kept by the default 64 MiB budget.
    const made = await big.run(request(LARGE, { session: 'large' }))
    expect(made.error).toBeUndefined()
    expect(made.session).toMatchObject({ kept: true })
    expect(made.session?.bytes).toBeGreaterThan(4 * MIB)
    const bytes = (await big.suspendSession?.('large')) as Uint8Array
    expect(bytes).toBeInstanceOf(Uint8Array)

    const refused: unknown = await small.resumeSession?.('large', bytes).catch((error: unknown) => error)
    expect(refused).toBeInstanceOf(SnapshotError)
    expect(refused).toMatchObject({ code: 'too-large' })
    expect((refused as Error).message).toMatch(/maxSessionBytes/)
    expect((refused as Error).message).toContain(String(4 * MIB))
    // Nothing was resumed: the session starts fresh here.
    const after = await small.run(request('return typeof rows', { session: 'large' }))
    expect(after.value).toBe('undefined')
    expect(after.session).toMatchObject({ fresh: true })
    // The same bytes resume where the budget holds them.
    await big.resumeSession?.('large', bytes)
    expect((await big.run(request('return rows.length', { session: 'large' }))).value).toBe(12 * MIB + 1)
  })

  test('a stored session over maxSessionBytes here (saved with a larger budget) starts fresh with a note', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ptc-session-budget-'))
    try {
      const store = createFileSessionStore({ directory: dir })
      const saver = createQuickJSRuntime({ isolation, poolSize: 1, secret, sessions: { store } })
      const made = await saver.run(request(LARGE, { session: 'stored' }))
      expect(made.session?.bytes).toBeGreaterThan(4 * MIB)
      // Disposed, it saves its idle sessions to the store.
      await saver.dispose()
      const sessions = { store, maxSessionBytes: 4 * MIB }
      await using loader = createQuickJSRuntime({ isolation, poolSize: 1, secret, sessions })
      const loaded = await loader.run(request('return typeof rows', { session: 'stored' }))
      expect(loaded.error).toBeUndefined()
      expect(loaded.value).toBe('undefined')
      expect(loaded.session).toMatchObject({ fresh: true })
      expect(loaded.session?.note).toMatch(/could not be resumed .*maxSessionBytes.*it starts fresh/)
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })

  test('a session within the budget resumes on the smaller runtime', async () => {
    await big.run(request('globalThis.note = "small"', { session: 'little' }))
    const bytes = (await big.suspendSession?.('little')) as Uint8Array
    await small.resumeSession?.('little', bytes)
    expect((await small.run(request('return note', { session: 'little' }))).value).toBe('small')
  })

  test("a suspended run's state is refused by resumeSession as SnapshotError, whatever the key", async () => {
    const first = await big.run(request('await tools.ask({}); return 1', { durable: { key: 'run-a' } }))
    const state = first.suspended?.state as Uint8Array
    expect(state).toBeInstanceOf(Uint8Array)
    // Under the identity it was sealed with, the bytes are authentic: still no session's.
    for (const key of ['run-a', 'run\u0000run-a']) {
      const refused: unknown = await big.resumeSession?.(key, state).catch((error: unknown) => error)
      expect(refused, key).toBeInstanceOf(SnapshotError)
      expect(refused, key).toMatchObject({ code: 'foreign-session' })
    }
    // And the run is not lost: it resumes.
    const opened = await big.openRun?.('run-a', state)
    const resumed = await big.resumeRun?.(opened as NonNullable<typeof opened>, { call: async () => 'ok' })
    expect(resumed?.value).toBe(1)
  })

  test('after Object.freeze(globalThis), a runtime TypeError is an exception in a session too', async () => {
    expect((await big.run(request('Object.freeze(globalThis)', { session: 'frozen' }))).error).toBeUndefined()
    // Its declarations cannot become globals of the frozen global object: a runtime failure, not a syntax one.
    const declared = await big.run(request('const y = 1; return y', { session: 'frozen' }))
    expect(declared.error?.kind).toBe('exception')
    expect(declared.error?.message).toMatch(/^TypeError: /)
    const thrown = await big.run(request('null.x', { session: 'frozen' }))
    expect(thrown.error?.kind).toBe('exception')
    expect((await big.run(request('return (', { session: 'frozen' }))).error?.kind).toBe('syntax')
  })
})
