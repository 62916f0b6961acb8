/**
 * Durable approval: a second resume of a token that this process is resuming already is refused
 * `IN_PROGRESS` at once. With a store that neither claims nor takes, nothing else stops it: it would read the
 * state the first resume has not deleted yet, and the approved call would run twice.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createQuickJSRuntime } from '@ptc/sandbox-quickjs'
import { createFileSessionStore, type SessionStore } from '@ptc/sandbox/session'
import { ptcHarness } from '@ptc/ptc/testing'
import { afterAll, expect, test } from 'vitest'

const dir = mkdtempSync(join(tmpdir(), 'ptc-durable-in-process-'))
const runtime = createQuickJSRuntime({ isolation: 'inline', poolSize: 1 })
afterAll(async () => {
  await runtime.dispose()
  rmSync(dir, { recursive: true, force: true })
})

test('a second resume of a token this process is resuming is refused IN_PROGRESS, and the program goes on once', async () => {
  const inner = createFileSessionStore({ directory: dir })
  let token = ''
  let reached!: () => void
  const reading = new Promise<void>((resolve) => (reached = resolve))
  let letGo!: () => void
  const held = new Promise<void>((resolve) => (letGo = resolve))
  let first = true
  // Only get, set and delete: no claim (no lease across processes) and no take.
  const store: SessionStore = {
    get: async (key) => {
      if (key === token && first) {
        first = false
        reached()
        await held
      }
      return inner.get(key)
    },
    set: (key, bytes, options) => inner.set(key, bytes, options),
    delete: (key) => inner.delete(key),
  }
  const h = ptcHarness(runtime, { durable: { store }, approval: { request: async () => 'deferred' } })
  h.tools.on('tools/pre-execute', (exec, next) => (exec.name === 'write' ? { kind: 'ask', reason: 'writes' } : next()))
  const suspended = await h.runCode(`const w = await tools.write({ key: 'once' }); return w.written`)
  token = (suspended.value as { awaiting: { token: string } }).awaiting.token
  const signal = new AbortController().signal
  const resume = () => h.tools.resume({ token, decision: 'allowed-once', agent: h.agent, signal })
  const resuming = resume()
  await reading
  const message = `the program of token ${token} is being resumed already`
  await expect(resume()).rejects.toMatchObject({ code: 'IN_PROGRESS', message })
  letGo()
  expect(((await resuming).results[0]?.result.value as { result?: unknown }).result).toBe('once')
  expect(h.trace.filter((entry) => entry === 'start write once')).toHaveLength(1)
})
