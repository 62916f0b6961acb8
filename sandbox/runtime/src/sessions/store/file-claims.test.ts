import { spawn } from 'node:child_process'
import { mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, describe, expect, test } from 'vitest'
import { _claimPath, createFileSessionStore } from './file-store.js'
import { claimCases } from './fixtures/claims.js'

const root = mkdtempSync(join(tmpdir(), 'ptc-file-claims-'))
afterAll(() => rmSync(root, { recursive: true, force: true }))
let folders = 0
const freshDirectory = (): string => join(root, `store-${++folders}`, 'sessions')

/** Runs an ES module `script` in a node process of its own; its stdout. */
function runChild(script: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'inherit'], env: { ...process.env, NODE_OPTIONS: '' } })
    let out = ''
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()))
    child.on('error', reject)
    child.on('exit', (code) => (code === 0 ? resolve(out) : reject(new Error(`child exited ${code}`))))
  })
}

/** The lock of `key`'s claim as another process holds it (a directory with that process's token file), the token `ageMs` old. */
function heldLock(dir: string, key: string, ageMs = 0): string {
  const lock = `${_claimPath(dir, key)}.lock`
  mkdirSync(lock)
  const token = join(lock, 'fedcba9876543210')
  writeFileSync(token, '')
  const at = new Date(Date.now() - ageMs)
  utimesSync(token, at, at)
  return lock
}

describe('file store claims', () => {
  const directory = freshDirectory()
  let clock = Date.now()
  claimCases(
    () => createFileSessionStore({ directory, now: () => clock }),
    async () => {
      clock += 10 * 60_000
    },
    60_000,
  )

  test('a renewal that waits for the claim\'s lock lasts its TTL from when it is made, not from when it began', async () => {
    const dir = freshDirectory()
    let now = 1_000_000
    const store = createFileSessionStore({ directory: dir, now: () => now })
    expect(await store.claim?.('k', 'a', 1_000)).toBeUndefined()
    // Another process is inside the claim's lock (a release, a takeover): the renewal waits for it.
    const lock = heldLock(dir, 'k')
    let renewed = false
    const renewal = store.claim?.('k', 'a', 1_000).then((outcome) => ((renewed = true), outcome))
    await new Promise((resolve) => setTimeout(resolve, 30))
    expect(renewed).toBe(false)
    now += 600
    rmSync(lock, { recursive: true })
    expect(await renewal).toBeUndefined()
    // Held for 1 000 ms after the renewal was made (the clock then), not after it was asked for.
    expect(await store.claim?.('k', 'b', 1_000)).toEqual({ holder: 'a', expiresInMs: 1_000 })
  })

  test('a claim lock left by a process that died in it is taken over once stale; the sweep removes stale locks and half-made ones', async () => {
    const dir = freshDirectory()
    const store = createFileSessionStore({ directory: dir })
    expect(await store.claim?.('k', 'a', 60_000)).toBeUndefined()
    heldLock(dir, 'k', 11_000)
    // The dead process's lock goes, and the release happens under a lock of this process's own.
    await store.release?.('k', 'a')
    expect(await store.claim?.('k', 'b', 60_000)).toBeUndefined()
    expect(readdirSync(dir).filter((n) => n.endsWith('.lock'))).toEqual([])
    // The sweep: a lock older than ten minutes, and a lock made aside by a process that died before renaming it.
    const lock = heldLock(dir, 'k')
    const staging = join(dir, '.0011223344556677.lock')
    mkdirSync(staging)
    writeFileSync(join(staging, '0011223344556677'), '')
    const ancient = new Date(Date.now() - 11 * 60_000)
    for (const path of [lock, staging]) utimesSync(path, ancient, ancient)
    expect(await store.sweep?.()).toBe(2)
    expect(readdirSync(dir).filter((n) => n.endsWith('.lock'))).toEqual([])
    expect(await store.claim?.('k', 'c', 60_000)).toEqual({ holder: 'b', expiresInMs: expect.any(Number) as number })
  })

  /** Six processes each claim keys k0…k19 of `dir` in turn: which of them each process got. */
  async function claimInSixProcesses(dir: string): Promise<boolean[][]> {
    const store = fileURLToPath(new URL('./file-store.ts', import.meta.url))
    const claimers = Array.from({ length: 6 }, (_, i) =>
      runChild(
        `const { createFileSessionStore } = await import(${JSON.stringify(store)})
const s = createFileSessionStore({ directory: ${JSON.stringify(dir)} })
const results = []
for (let round = 0; round < 20; round++) results.push((await s.claim('k' + round, 'p${i}', 60000)) === undefined)
console.log(JSON.stringify(results))`,
      ),
    )
    return (await Promise.all(claimers)).map((out) => JSON.parse(out) as boolean[])
  }

  test('claims from several processes at once: exactly one holds the key', async () => {
    const dir = freshDirectory()
    const won = await claimInSixProcesses(dir)
    for (let round = 0; round < 20; round++) expect(won.filter((w) => w[round]).length, `round ${round}`).toBe(1)
    expect(readdirSync(dir).filter((name) => name.startsWith('.'))).toEqual([])
  }, 60_000)

  test('six processes taking over expired claims behind locks left stale by a dead process: exactly one holds each key', async () => {
    const dir = freshDirectory()
    // Twenty expired claims, each behind a lock whose holder died eleven seconds ago.
    const past = createFileSessionStore({ directory: dir, now: () => Date.now() - 10 * 60_000 })
    for (let round = 0; round < 20; round++) {
      expect(await past.claim?.(`k${round}`, 'dead', 1_000)).toBeUndefined()
      heldLock(dir, `k${round}`, 11_000)
    }
    const won = await claimInSixProcesses(dir)
    for (let round = 0; round < 20; round++) expect(won.filter((w) => w[round]).length, `round ${round}`).toBe(1)
    expect(readdirSync(dir).filter((name) => name.endsWith('.lock'))).toEqual([])
  }, 60_000)

  test('takeovers of an expired claim, 16 at once, 100 times over: one winner each time (a claim is never removed after another process made it)', async () => {
    const dir = freshDirectory()
    let clock = Date.now()
    const store = () => createFileSessionStore({ directory: dir, now: () => clock })
    const winners: number[] = []
    for (let round = 0; round < 100; round++) {
      expect(await store().claim?.(`k${round}`, 'first', 60_000)).toBeUndefined()
      clock += 10 * 60_000
      const results = await Promise.all(Array.from({ length: 16 }, (_, i) => store().claim?.(`k${round}`, `holder-${i}`, 60_000)))
      winners.push(results.filter((r) => r === undefined).length)
    }
    expect(winners.filter((n) => n !== 1)).toEqual([])
  })

  test('a claim file has mode 0600; sweep removes expired claims and stale claim temporaries; a file that is not a claim never blocks', async () => {
    const directory = freshDirectory()
    let clock = Date.now()
    const store = createFileSessionStore({ directory, now: () => clock })
    expect(await store.claim?.('short', 'holder-a', 1000)).toBeUndefined()
    expect(await store.claim?.('long', 'holder-a', 10 ** 9)).toBeUndefined()
    expect(statSync(_claimPath(directory, 'short')).mode & 0o777).toBe(0o600)
    writeFileSync(join(directory, '.0123456789abcdef.claim'), 'left by a crash')
    writeFileSync(_claimPath(directory, 'garbage'), 'not a claim')
    expect(await store.claim?.('garbage', 'holder-b', 1000)).toBeUndefined()
    expect(await store.sweep?.()).toBe(0)
    // A claim's lock left by a process that died holding it, 11 minutes ago (locks are aged by the real clock).
    const lock = `${_claimPath(directory, 'crashed')}.lock`
    mkdirSync(lock)
    utimesSync(lock, new Date(Date.now() - 11 * 60_000), new Date(Date.now() - 11 * 60_000))
    clock += 11 * 60_000
    expect(await store.sweep?.()).toBe(4) // two expired claims, the stale temporary, the stale lock
    expect(readdirSync(directory)).toEqual([_claimPath(directory, 'long').slice(directory.length + 1)])
    expect((await store.claim?.('long', 'holder-b', 1000))?.holder).toBe('holder-a')
  })
})
