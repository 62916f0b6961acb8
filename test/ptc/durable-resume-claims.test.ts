/**
 * Durable approval: a resume that ends before it got the state gives back the claim of its token, so the next
 * resume is not refused `IN_PROGRESS` until the claim runs out: an aborted resume, and one whose store answered
 * the claim only after `storeWaitMs`.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createQuickJSRuntime } from '@ptc/sandbox-quickjs'
import { createFileSessionStore, type SessionStore } from '@ptc/sandbox/session'
import type { PtcExecutorOptions } from '@ptc/ptc'
import { ptcHarness, type PtcHarness } from '@ptc/ptc/testing'
import type { CodeRuntime } from '@ptc/sandbox'
import { afterAll, describe, expect, test } from 'vitest'

const dir = mkdtempSync(join(tmpdir(), 'ptc-durable-claims-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))
let stores = 0
const fileStore = (): SessionStore => createFileSessionStore({ directory: join(dir, `store-${++stores}`) })

/** A harness whose `write` calls ask for approval, and whose approval service defers. */
function harness(runtime: CodeRuntime, options: Omit<PtcExecutorOptions, 'runtime'> = {}): PtcHarness {
  const h = ptcHarness(runtime, { ...options, approval: { request: async () => 'deferred' } })
  h.tools.on('tools/pre-execute', (exec, next) => (exec.name === 'write' ? { kind: 'ask', reason: 'writes' } : next()))
  return h
}

/** The token of a program that suspended on `write({ key })`, returning what was written once resumed. */
async function suspend(h: PtcHarness, key: string): Promise<string> {
  const result = await h.runCode(`const w = await tools.write({ key: ${JSON.stringify(key)} }); return w.written`)
  return (result.value as { awaiting: { token: string } }).awaiting.token
}

/** Resumes `token` allowing its call; the program's result. */
async function resume(h: PtcHarness, token: string, signal = new AbortController().signal): Promise<unknown> {
  const batch = await h.tools.resume({ token, decision: 'allowed-once', agent: h.agent, signal })
  return (batch.results[0]?.result.value as { result?: unknown }).result
}

/** Whether nobody holds the claim of `token`'s resume in `store` (found by claiming it, then letting it go). */
async function claimFree(store: SessionStore, token: string): Promise<boolean> {
  const key = `${token}:resume`
  const other = await (store.claim as NonNullable<SessionStore['claim']>)(key, 'probe', 1000)
  await store.release?.(key, 'probe')
  return other === undefined
}

describe('durable approval: a resume that ends early releases its claim', () => {
  const runtime = createQuickJSRuntime({ isolation: 'inline', poolSize: 1 })
  afterAll(() => runtime.dispose())

  test('a resume with an aborted signal takes nothing: the next resume runs the program', async () => {
    const store = fileStore()
    const h = harness(runtime, { durable: { store } })
    const token = await suspend(h, 'a')
    await expect(resume(h, token, AbortSignal.abort())).rejects.toMatchObject({ name: 'AbortError' })
    expect(h.trace).toEqual([])
    expect(await claimFree(store, token)).toBe(true)
    expect(await resume(h, token)).toBe('a')
    expect(h.trace).toEqual(['start write a', 'end write a'])
  })

  test('a resume aborted while its claim is on its way: that claim goes as the store answers', async () => {
    const inner = fileStore()
    const innerClaim = inner.claim as NonNullable<SessionStore['claim']>
    let holdClaims = false
    let letGo = (): void => undefined
    let entered = (): void => undefined
    const claimEntered = new Promise<void>((resolve) => (entered = resolve))
    let claimed = (): void => undefined
    const claimMade = new Promise<void>((resolve) => (claimed = resolve))
    const store: SessionStore = {
      ...inner,
      claim: async (key, holder, ttlMs, options) => {
        if (holdClaims) {
          entered()
          await new Promise<void>((resolve) => (letGo = resolve))
        }
        const other = await innerClaim(key, holder, ttlMs, options)
        if (holdClaims) claimed()
        return other
      },
    }
    const h = harness(runtime, { durable: { store } })
    const token = await suspend(h, 'b')
    holdClaims = true
    const controller = new AbortController()
    const resuming = resume(h, token, controller.signal)
    await claimEntered
    controller.abort()
    await expect(resuming).rejects.toMatchObject({ name: 'AbortError' })
    letGo()
    await claimMade
    holdClaims = false
    // The claim the store made late goes once it answered: then the next resume gets the token.
    await expect.poll(() => claimFree(inner, token), { timeout: 10_000 }).toBe(true)
    expect(await resume(h, token)).toBe('b')
  })

  test('a claim answered after storeWaitMs: STORE_UNAVAILABLE, the late claim goes, the next resume runs', async () => {
    const inner = fileStore()
    const innerClaim = inner.claim as NonNullable<SessionStore['claim']>
    let late = false
    let letGo = (): void => undefined
    let claimed = (): void => undefined
    const claimMade = new Promise<void>((resolve) => (claimed = resolve))
    const store: SessionStore = {
      ...inner,
      claim: async (key, holder, ttlMs, options) => {
        if (!late) return innerClaim(key, holder, ttlMs, options)
        await new Promise<void>((resolve) => (letGo = resolve))
        const other = await innerClaim(key, holder, ttlMs, options)
        claimed()
        return other
      },
    }
    const h = harness(runtime, { durable: { store, storeWaitMs: 100 } })
    const token = await suspend(h, 'c')
    late = true
    await expect(resume(h, token)).rejects.toMatchObject({ code: 'STORE_UNAVAILABLE' })
    late = false
    letGo()
    await claimMade
    await expect.poll(() => claimFree(inner, token), { timeout: 10_000 }).toBe(true)
    expect(await resume(h, token)).toBe('c')
    expect(h.trace).toEqual(['start write c', 'end write c'])
  })
})
