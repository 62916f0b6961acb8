import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, test } from 'vitest'
import { sessionStateOptions } from './session-state.js'

const dirs: string[] = []
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true })
})

const hex = (secret: Uint8Array | string | undefined): string =>
  secret === undefined ? '' : typeof secret === 'string' ? secret : Buffer.from(secret).toString('hex')

/** 24 first uses of a fresh folder at once: one secret for all, whole, mode 0600, nothing else left in the folder. */
async function firstUsesAtOnce(): Promise<void> {
  const cwd = mkdtempSync(join(tmpdir(), 'ptc-session-state-'))
  dirs.push(cwd)
  const all = await Promise.allSettled(Array.from({ length: 24 }, () => sessionStateOptions('k', '.ptc/sessions', cwd)))
  expect(all.filter((r) => r.status === 'rejected').map((r) => String(r.reason))).toEqual([])
  const secrets = new Set(all.map((r) => (r.status === 'fulfilled' ? hex(r.value.secret) : '')))
  expect(secrets.size).toBe(1)
  const [secret] = secrets
  expect(secret).toMatch(/^[0-9a-f]{64}$/)
  const dir = join(cwd, '.ptc/sessions')
  expect(readdirSync(dir)).toEqual(['secret'])
  expect(statSync(join(dir, 'secret')).mode & 0o777).toBe(0o600)
  expect(hex((await sessionStateOptions('k', '.ptc/sessions', cwd)).secret)).toBe(secret)
}

describe('sessionStateOptions', () => {
  test('first uses at the same moment agree on one secret and leave only it behind', async () => {
    for (let round = 0; round < 10; round++) await firstUsesAtOnce()
  })
})
