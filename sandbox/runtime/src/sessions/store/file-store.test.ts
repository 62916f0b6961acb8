import { execFileSync, spawn } from 'node:child_process'
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  rmSync,
  statSync,
  symlinkSync,
  truncateSync,
  utimesSync,
  writeFileSync,
} from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, describe, expect, test } from 'vitest'
import { SandboxUsageError } from '../../errors.js'
import { SessionStoreError } from './errors.js'
import { _claimPath, _entryPath, createFileSessionStore } from './file-store.js'
import { claimCases } from './fixtures/claims.js'
import { MAX_SESSION_KEY_BYTES } from './store.js'

const root = mkdtempSync(join(tmpdir(), 'ptc-file-store-'))
afterAll(() => rmSync(root, { recursive: true, force: true }))
let folders = 0
/** A method the file store has (the interface makes it optional). */
function must<T>(method: T | undefined): T {
  if (method === undefined) throw new Error('the file store has every method of SessionStore')
  return method
}

const freshDirectory = (): string => join(root, `store-${++folders}`, 'sessions')

/** Runs an ES module `script` in a node process of its own; its stdout. */
function runChild(script: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      stdio: ['ignore', 'pipe', 'inherit'],
      env: { ...process.env, NODE_OPTIONS: '' },
    })
    let out = ''
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()))
    child.on('error', reject)
    child.on('exit', (code) => (code === 0 ? resolve(out) : reject(new Error(`child exited ${code}`))))
  })
}

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise
  } catch (error) {
    return error
  }
  throw new Error('expected a rejection')
}

describe('file store', () => {
  test('set, get, overwrite, delete', async () => {
    const store = createFileSessionStore({ directory: freshDirectory() })
    expect(await store.get('a')).toBeUndefined()
    await store.set('a', Buffer.from('one'))
    expect(Buffer.from((await store.get('a')) ?? []).toString()).toBe('one')
    await store.set('a', new Uint8Array(0))
    expect((await store.get('a'))?.length).toBe(0)
    await store.set('a', Buffer.from('two'))
    expect(Buffer.from((await store.get('a')) ?? []).toString()).toBe('two')
    expect(await store.delete('a')).toBe(true)
    expect(await store.delete('a')).toBe(false)
    expect(await store.get('a')).toBeUndefined()
  })

  test('a directory removed while the store is in use is made again by the next write, and claim', async () => {
    const directory = freshDirectory()
    const store = createFileSessionStore({ directory })
    await store.set('a', Buffer.from('one'))
    rmSync(directory, { recursive: true })
    expect(await store.get('a')).toBeUndefined()
    await store.set('b', Buffer.from('two'))
    expect(Buffer.from((await store.get('b')) ?? []).toString()).toBe('two')
    expect(statSync(directory).mode & 0o777).toBe(0o700)
    rmSync(directory, { recursive: true })
    expect(await store.claim?.('c', 'holder-1', 10_000)).toBeUndefined()
  })

  test('a directory replaced by a file fails every operation with a store error naming it; one replaced by a symbolic link to nothing, set and claim', async () => {
    const base = freshDirectory()
    mkdirSync(base, { recursive: true })
    const file = join(base, 'file')
    writeFileSync(file, 'not a directory')
    const dangling = join(base, 'dangling')
    symlinkSync(join(base, 'nowhere'), dangling)
    for (const [directory, what] of [
      [file, 'it is a file'],
      [dangling, 'it is a symbolic link to nothing'],
      [join(file, 'sub'), 'a part of its path is a file'],
    ] as const) {
      const store = createFileSessionStore({ directory })
      const expected = {
        name: 'SessionStoreError',
        code: 'unavailable',
        message: `the session store's directory ${directory} is not a directory (${what}): nothing can be saved there until it is one`,
      }
      await expect(store.set('a', Buffer.from('one'))).rejects.toMatchObject(expected)
      await expect(store.claim?.('a', 'holder-1', 10_000)).rejects.toMatchObject(expected)
      if (directory === dangling) continue // nothing is there to read: reads find nothing
      for (const read of [
        () => store.get('a'),
        () => must(store.take)('a'),
        () => store.delete('a'),
        () => must(store.sweep)(),
        () => must(store.release)('a', 'holder-1'),
      ]) {
        await expect(read()).rejects.toMatchObject(expected)
      }
    }
    const dangled = createFileSessionStore({ directory: dangling })
    expect([
      await dangled.get('a'),
      await must(dangled.take)('a'),
      await dangled.delete('a'),
      await must(dangled.sweep)(),
    ]).toEqual([undefined, undefined, false, 0])
    // Nothing was made or changed in their place.
    expect(readdirSync(base).sort()).toEqual(['dangling', 'file'])
  })

  test('an entry larger than a store file may be (2 GiB), planted with a valid header, is moved aside unread', async () => {
    const directory = freshDirectory()
    const store = createFileSessionStore({ directory })
    await store.set('big', Buffer.from('small'))
    const file = _entryPath(directory, 'big')
    const length = 2 ** 31 + 10
    const header = Buffer.alloc(24)
    header.write('PTSF', 0, 'latin1')
    header.writeUInt8(1, 4)
    header.writeBigUInt64BE(BigInt(length), 16)
    writeFileSync(file, header)
    truncateSync(file, 24 + length) // sparse: nothing is written
    const error = await rejection(store.get('big'))
    expect(error).toMatchObject({
      code: 'corrupt-entry',
      message: expect.stringContaining(
        `its payload is ${length} bytes, more than the 2147483647 a store file may hold. It was moved aside to ${file}.unreadable-`,
      ),
    })
    expect(await store.get('big')).toBeUndefined()
  })

  test('the directory is created with mode 0700 and every entry has mode 0600', async () => {
    const directory = freshDirectory()
    const store = createFileSessionStore({ directory })
    await store.set('k', Buffer.from('v'))
    expect(statSync(directory).mode & 0o777).toBe(0o700)
    const files = readdirSync(directory)
    expect(files).toHaveLength(1)
    expect(statSync(join(directory, files[0] as string)).mode & 0o777).toBe(0o600)
    await store.set('k', Buffer.from('w'))
    expect(statSync(_entryPath(directory, 'k')).mode & 0o777).toBe(0o600)
  })

  test('keys that look like paths name files inside the directory', async () => {
    const directory = freshDirectory()
    const store = createFileSessionStore({ directory })
    const keys = ['../x', '/etc/passwd', '../../../../tmp/escape', 'a/b/c', '.', '..', 'C:\\x', 'nul\u0000byte']
    for (const [i, key] of keys.entries()) await store.set(key, Buffer.from(String(i)))
    const files = readdirSync(directory)
    expect(files).toHaveLength(keys.length)
    for (const file of files) expect(file).toMatch(/^[0-9a-f]{64}\.session$/)
    expect(readdirSync(join(directory, '..'))).toEqual(['sessions'])
    for (const [i, key] of keys.entries()) expect(Buffer.from((await store.get(key)) ?? []).toString()).toBe(String(i))
  })

  test('many parallel sets of one key leave one whole value and no temporary file', async () => {
    const directory = freshDirectory()
    const store = createFileSessionStore({ directory })
    const values = Array.from({ length: 40 }, (_, i) => Buffer.alloc(64 * 1024 + i * 1000, i))
    await Promise.all(values.map((value) => store.set('same', value)))
    const read = Buffer.from((await store.get('same')) ?? [])
    expect(values.some((value) => value.equals(read))).toBe(true)
    expect(readdirSync(directory)).toHaveLength(1)
  })

  test('a set that fails once its temporary file is written removes that file, and the store stays usable', async () => {
    const directory = freshDirectory()
    const store = createFileSessionStore({ directory })
    // A directory (not empty) where the entry goes: the rename of the written temporary file over it fails.
    mkdirSync(join(_entryPath(directory, 'k'), 'inside'), { recursive: true })
    await expect(store.set('k', Buffer.from('value'))).rejects.toThrow()
    expect(readdirSync(directory).filter((name) => name.startsWith('.'))).toEqual([])
    await store.set('other', Buffer.from('x'))
    expect(Buffer.from((await store.get('other')) ?? []).toString()).toBe('x')
  })

  test('sets of one key from several processes at once leave one whole value', async () => {
    const directory = freshDirectory()
    const module = fileURLToPath(new URL('./file-store.ts', import.meta.url))
    const writer = (n: number): Promise<number | null> =>
      new Promise((resolve, reject) => {
        const script = [
          `const { createFileSessionStore } = await import(${JSON.stringify(module)})`,
          `const store = createFileSessionStore({ directory: ${JSON.stringify(directory)} })`,
          `for (let i = 0; i < 20; i++) await store.set('shared', Buffer.alloc(100_000 + ${n} * 20 + i, ${n} * 20 + i))`,
        ].join('\n')
        const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
          stdio: ['ignore', 'ignore', 'inherit'],
          env: { ...process.env, NODE_OPTIONS: '' },
        })
        child.on('error', reject)
        child.on('exit', resolve)
      })
    expect(await Promise.all([0, 1, 2, 3].map(writer))).toEqual([0, 0, 0, 0])
    const read = Buffer.from((await createFileSessionStore({ directory }).get('shared')) ?? [])
    const fill = read[0] as number
    expect(read.length).toBe(100_000 + fill)
    expect(read.every((byte) => byte === fill)).toBe(true)
    expect(readdirSync(directory)).toHaveLength(1)
  })

  test('an entry past its TTL reads as missing and its file is removed', async () => {
    const directory = freshDirectory()
    let clock = 1_000_000
    const store = createFileSessionStore({ directory, now: () => clock })
    await store.set('short', Buffer.from('x'), { ttlMs: 50 })
    await store.set('forever', Buffer.from('y'))
    clock += 49
    expect(Buffer.from((await store.get('short')) ?? []).toString()).toBe('x')
    clock += 1
    expect(await store.get('short')).toBeUndefined()
    expect(readdirSync(directory)).toEqual([_entryPath(directory, 'forever').slice(directory.length + 1)])
    clock += 10 ** 9
    expect(Buffer.from((await store.get('forever')) ?? []).toString()).toBe('y')
  })

  test('sweep removes expired entries and stale temporary files, and keeps the rest (a foreign file too)', async () => {
    const directory = freshDirectory()
    let clock = Date.now()
    const store = createFileSessionStore({ directory, now: () => clock })
    expect(await createFileSessionStore({ directory: join(directory, 'absent') }).sweep?.()).toBe(0)
    await store.set('short', Buffer.from('x'), { ttlMs: 50 })
    await store.set('long', Buffer.from('y'), { ttlMs: 10 ** 9 })
    await store.set('forever', Buffer.from('z'))
    writeFileSync(join(directory, '.0123456789abcdef.tmp'), 'half a write')
    writeFileSync(join(directory, 'notes.txt'), 'not ours')
    expect(await store.sweep?.()).toBe(0)
    clock += 11 * 60_000
    expect(await store.sweep?.()).toBe(2)
    expect(readdirSync(directory).sort()).toEqual(
      [_entryPath(directory, 'long'), _entryPath(directory, 'forever')]
        .map((p) => p.slice(directory.length + 1))
        .concat('notes.txt')
        .sort(),
    )
    expect(Buffer.from((await store.get('long')) ?? []).toString()).toBe('y')
  })

  test('take gets and removes an entry at once: of many takers in parallel one gets it; expired or corrupt as get', async () => {
    const directory = freshDirectory()
    let clock = Date.now()
    const store = createFileSessionStore({ directory, now: () => clock })
    await store.set('once', Buffer.from('the state'))
    const takers = await Promise.all(
      Array.from({ length: 8 }, () => createFileSessionStore({ directory }).take?.('once')),
    )
    expect(takers.filter((t) => t !== undefined).map((t) => Buffer.from(t as Uint8Array).toString())).toEqual([
      'the state',
    ])
    expect(readdirSync(directory)).toEqual([])
    await store.set('short', Buffer.from('x'), { ttlMs: 50 })
    clock += 50
    expect(await store.take?.('short')).toBeUndefined()
    expect(readdirSync(directory)).toEqual([])
    writeFileSync(_entryPath(directory, 'bad'), 'not a store file')
    expect(await rejection(store.take?.('bad') as Promise<unknown>)).toMatchObject({ code: 'corrupt-entry' })
    // Moved aside as get() does: no later set of the key replaces it.
    const name = _entryPath(directory, 'bad').slice(directory.length + 1)
    expect(readdirSync(directory)).toEqual([
      expect.stringMatching(new RegExp(`^${name.replace('.', '\\.')}\\.unreadable-\\d+$`)),
    ])
  })

  test('a named pipe in place of an entry or a claim is refused or passed over at once, never waited on', async () => {
    const directory = freshDirectory()
    const store = createFileSessionStore({ directory })
    await store.set('other', Buffer.from('kept'))
    const entry = _entryPath(directory, 'piped')
    const mkfifo = (path: string): void => void execFileSync('mkfifo', ['-m', '600', path])
    mkfifo(entry)
    mkfifo(_claimPath(directory, 'piped'))
    // A sweep passes the entry's over; the claim's is no claim, which it removes as an expired one.
    expect(await store.sweep?.()).toBe(1)
    expect(statSync(entry).isFIFO()).toBe(true)
    for (const read of [() => store.take?.('piped') as Promise<unknown>, () => store.get('piped')]) {
      if (!existsSync(entry)) mkfifo(entry)
      const error = await rejection(read())
      expect(error).toMatchObject({ code: 'corrupt-entry' })
      expect((error as Error).message).toContain(
        `${entry} (key "piped") is not a store file: it is not a regular file. It was moved aside to ${entry}.unreadable-`,
      )
      await new Promise((resolve) => setTimeout(resolve, 2)) // a new name for the next file aside
    }
    expect(readdirSync(directory).filter((name) => name.includes('.unreadable-'))).toHaveLength(2)
    expect(await store.claim?.('piped', 'me', 60_000)).toBeUndefined()
    expect(Buffer.from((await store.get('other')) ?? []).toString()).toBe('kept')
  })

  test('deleting an expired entry removes it and says there was no live one', async () => {
    let clock = 0
    const store = createFileSessionStore({ directory: freshDirectory(), now: () => clock })
    await store.set('k', Buffer.from('x'), { ttlMs: 1 })
    clock = 5
    expect(await store.delete('k')).toBe(false)
    expect(await store.get('k')).toBeUndefined()
  })

  test('a set replaces an entry TTL and all', async () => {
    let clock = 0
    const store = createFileSessionStore({ directory: freshDirectory(), now: () => clock })
    await store.set('k', Buffer.from('x'), { ttlMs: 10 })
    await store.set('k', Buffer.from('z'))
    clock = 100
    expect(Buffer.from((await store.get('k')) ?? []).toString()).toBe('z')
  })

  test('a file that is not a store file is an error naming it, and is moved aside, where no set of its key replaces it', async () => {
    const directory = freshDirectory()
    const store = createFileSessionStore({ directory })
    await store.set('k', Buffer.from('valid'))
    const file = _entryPath(directory, 'k')
    const aside = (): string[] => readdirSync(directory).filter((name) => name.includes('.unreadable-'))
    for (const [bytes, reason] of [
      [Buffer.from('garbage that is long enough for a header'), /does not start with "PTSF"/],
      [Buffer.from('PTSF'), /fewer than the 24-byte header/],
      [
        Buffer.concat([
          Buffer.from('PTSF\x01\0\0\0', 'latin1'),
          Buffer.alloc(8),
          Buffer.from([0, 0, 0, 0, 0, 0, 0, 9]),
          Buffer.from('short'),
        ]),
        /declares 9 bytes of payload but holds 5/,
      ],
      [Buffer.concat([Buffer.from('PTSF\x02\0\0\0', 'latin1'), Buffer.alloc(16)]), /version is 2/],
    ] as const) {
      writeFileSync(file, bytes)
      const error = await rejection(store.get('k'))
      expect(error).toBeInstanceOf(SessionStoreError)
      expect((error as SessionStoreError).code).toBe('corrupt-entry')
      expect((error as Error).message).toContain(file)
      expect((error as Error).message).toMatch(reason)
      const moved = aside().at(-1) as string
      expect((error as Error).message).toContain(
        `It was moved aside to ${join(directory, moved)}: inspect it, then delete it`,
      )
      expect(statSync(join(directory, moved)).size).toBe(bytes.length)
      // The key reads as missing now, and a set of it leaves the file aside alone.
      expect(await store.get('k')).toBeUndefined()
      await store.set('k', Buffer.from('new'))
      expect(statSync(join(directory, moved)).size).toBe(bytes.length)
      await new Promise((resolve) => setTimeout(resolve, 2)) // a new name for the next file aside
    }
    expect(aside()).toHaveLength(4)
    // Nothing of the store removes them: a sweep passes them over.
    expect(await store.sweep?.()).toBe(0)
    expect(aside()).toHaveLength(4)
    expect(Buffer.from((await store.get('k')) ?? []).toString()).toBe('new')
  })

  test('bad keys, values and TTLs are refused with clear errors', async () => {
    const store = createFileSessionStore({ directory: freshDirectory() })
    for (const key of ['', 'x'.repeat(MAX_SESSION_KEY_BYTES + 1), 'lone \ud800 surrogate', 42 as unknown as string]) {
      const error = await rejection(store.get(key))
      expect(error).toBeInstanceOf(SessionStoreError)
      expect((error as SessionStoreError).code).toBe('invalid-key')
    }
    expect(((await rejection(store.set('', new Uint8Array(1)))) as Error).message).toBe(
      'a session key must be a non-empty string, not ""',
    )
    expect(await rejection(store.set('k', 'text' as unknown as Uint8Array))).toBeInstanceOf(SandboxUsageError)
    for (const ttlMs of [0, -5, Number.NaN, Number.POSITIVE_INFINITY]) {
      expect(((await rejection(store.set('k', new Uint8Array(1), { ttlMs }))) as Error).message).toMatch(
        /ttlMs must be a positive finite number/,
      )
    }
    await store.set('x'.repeat(MAX_SESSION_KEY_BYTES), Buffer.from('longest key'))
    expect(() => createFileSessionStore({ directory: '' })).toThrow(SandboxUsageError)
  })
})

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

  test("a renewal that waits for the claim's lock lasts its TTL from when it is made, not from when it began", async () => {
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
      const results = await Promise.all(
        Array.from({ length: 16 }, (_, i) => store().claim?.(`k${round}`, `holder-${i}`, 60_000)),
      )
      winners.push(results.filter((r) => r === undefined).length)
    }
    expect(winners.filter((n) => n !== 1)).toEqual([])
  }, 60_000)

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
