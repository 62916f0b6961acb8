/**
 * Sessions across processes, with real child processes: a process suspends a session and is killed,
 * another resumes it; two replicas share a filesystem store, then a real Redis (redis-server on
 * loopback, found or installed by scripts/ensure-redis.ts; skipped with the reason when it cannot be had).
 */
import { spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync, symlinkSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { ensureRedisServer, startRedis, type RedisServer } from '../../../scripts/ensure-redis.js'

const REPLICA = fileURLToPath(new URL('./fixtures/session-replica.ts', import.meta.url))
const secret = randomBytes(32).toString('hex')
const dir = mkdtempSync(join(tmpdir(), 'ptc-session-replicas-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

interface Replica {
  code: number | null
  signal: NodeJS.Signals | null
  out?:
    | {
        value?: unknown
        error?: { kind: string; message: string }
        session?: { fresh: boolean; kept: boolean; runs: number; note?: string }
        pid: number
      }
    | undefined
  stderr: string
}

function replica(args: string[], env: Record<string, string> = {}, script = REPLICA): Promise<Replica> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--conditions=@ptc/source', '--import', 'tsx', script, ...args], {
      env: { ...process.env, NODE_OPTIONS: '', PTC_SECRET: secret, PTC_STORE_DIR: join(dir, 'store'), ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()))
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()))
    child.once('error', reject)
    child.once('close', (code, signal) => {
      const line = stdout.trim().split('\n').at(-1)
      resolve({
        code,
        signal,
        stderr,
        ...(line !== undefined && line.startsWith('{') && { out: JSON.parse(line) as Replica['out'] }),
      })
    })
  })
}

/** A `hold` replica: its first result once printed, and `end()` ends its standard input (it disposes and exits). */
function holding(
  key: string,
  code: string,
  env: Record<string, string> = {},
): { first: Promise<Replica['out']>; end: () => Promise<number | null>; kill: () => Promise<unknown> } {
  const child = spawn(process.execPath, ['--conditions=@ptc/source', '--import', 'tsx', REPLICA, 'hold', key, code], {
    env: { ...process.env, NODE_OPTIONS: '', PTC_SECRET: secret, PTC_STORE_DIR: join(dir, 'store'), ...env },
    stdio: ['pipe', 'pipe', 'inherit'],
  })
  const exited = new Promise<number | null>((resolve) => child.once('close', resolve))
  const first = new Promise<Replica['out']>((resolve, reject) => {
    let stdout = ''
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString()
      const line = stdout.split('\n').find((l) => l.startsWith('{'))
      if (line !== undefined) resolve(JSON.parse(line) as Replica['out'])
    })
    void exited.then((code) => reject(new Error(`the holding replica exited (${code}) before it printed a result`)))
  })
  return {
    first,
    end: () => {
      child.stdin.end()
      return exited
    },
    kill: () => {
      child.kill('SIGKILL')
      return exited
    },
  }
}

/**
 * A replica killed while it holds a session (its claim not ended, its state not saved): the next replica on
 * this machine takes the session over at once, from the state the store had, instead of waiting out the claim.
 */
async function takeOverFromKilled(key: string, env: Record<string, string> = {}): Promise<void> {
  const first = await replica(['run', key, DECLARE], env)
  expect(first.out?.value).toBe(1)
  const holder = holding(key, CONTINUE, env)
  expect((await holder.first)?.value).toEqual([['a', 'b'], true, 42, 84])
  await holder.kill()
  const next = await replica(['run', key, 'return names'], env)
  expect(next.out?.error).toBeUndefined()
  expect(next.out?.value).toEqual(['a'])
}

/** While one replica holds a session live, another's program in it is refused (nothing runs on a stale copy); once the first lets it go, the next continues its state. */
async function handOverWhileHeld(key: string, env: Record<string, string> = {}): Promise<void> {
  const one = holding(key, DECLARE, env)
  try {
    expect((await one.first)?.value).toBe(1)
    const two = await replica(['run', key, CONTINUE], env)
    expect(two.code, two.stderr).toBe(0)
    expect(two.out?.error?.kind).toBe('limit')
    expect(two.out?.error?.message).toMatch(
      new RegExp(`^session "${key}" is held by another process sharing the session store .*this program did not run`),
    )
    expect(two.out?.value).toBeUndefined()
  } finally {
    expect(await one.end()).toBe(0)
  }
  const three = await replica(['run', key, CONTINUE], env)
  expect(three.out?.value).toEqual([['a', 'b'], true, 42, 84])
  expect(three.out?.session).toMatchObject({ fresh: false, runs: 2 })
}

/**
 * Three replicas run programs in two sessions at once, sessions going to the store and between replicas as they
 * idle: each run appends its tag to its session's `tags`. Every run must see all the runs of its session before
 * it, in one history: what a run returned is a prefix of what every later run of that session returned, and the
 * last state holds every run's tag once. Two replicas running one session at once (each on its own copy) would
 * fork the history and lose the tags of one of them.
 */
async function noForks(env: Record<string, string>, prefix: string): Promise<void> {
  const keys = [`${prefix}-a`, `${prefix}-b`]
  const replicas = await Promise.all(
    [0, 1, 2].map(() =>
      replica(['hammer', keys.join(','), '24'], { PTC_SUSPEND_AFTER_MS: '30', PTC_ISOLATION: 'inline', ...env }),
    ),
  )
  const runs: { key: string; tag: string; tags: string[] }[] = []
  for (const r of replicas) {
    expect(r.code, r.stderr).toBe(0)
    runs.push(...(r.out as unknown as { runs: typeof runs }).runs)
  }
  for (const key of keys) {
    const last = await replica(['run', key, 'return tags'], env)
    const final = last.out?.value as string[]
    const mine = runs.filter((r) => r.key === key)
    expect(mine).toHaveLength(36)
    // Every successful run is in the final history, once.
    expect([...final].sort()).toEqual(mine.map((r) => r.tag).sort())
    // Each run saw exactly the history up to itself.
    for (const r of mine) expect(final.slice(0, r.tags.length), r.tag).toEqual(r.tags)
  }
}

const DECLARE =
  'const names = ["a"]; function add(n) { names.push(n); return names.length } class Box { constructor(v) { this.v = v } }; globalThis.box = new Box(await tools.double({ n: 21 })); return names.length'
const CONTINUE = 'add("b"); return [names, box instanceof Box, box.v, await tools.double({ n: box.v })]'

describe('sessions across processes', () => {
  test('a process suspends a session and is killed; a new process resumes it and continues', async () => {
    const file = join(dir, 'killed.session')
    const first = await replica(['suspend-and-die', 'k', DECLARE, file])
    expect(first.signal).toBe('SIGKILL')
    const second = await replica(['resume', 'k', file, CONTINUE])
    expect(second.code, second.stderr).toBe(0)
    expect(second.out?.value).toEqual([['a', 'b'], true, 42, 84])
    expect(second.out?.session).toMatchObject({ fresh: false, kept: true, runs: 2 })
    // Resumed under another key, the bytes are refused, and nothing runs on them.
    const foreign = await replica(['resume', 'other', file, CONTINUE])
    expect(foreign.code).not.toBe(0)
    expect(foreign.stderr).toMatch(/SnapshotError|belongs to session "k"/)
  }, 90_000) // three processes one after another (see below)

  test('a session moves between processes started from other paths, and between inline and worker isolation', async () => {
    // The same fixture under a longer path (a symlink: the process's argv[1] differs, its imports do not). The
    // engine's memory once held the host script's path, so such a process refused the session as another build.
    const longer = join(dir, `replica-started-from-another-path-${'x'.repeat(40)}.ts`)
    symlinkSync(REPLICA, longer)
    for (const [from, to] of [
      ['inline', 'worker'],
      ['worker', 'inline'],
      ['inline', 'inline'],
    ] as const) {
      const file = join(dir, `moved-${from}-${to}.session`)
      const first = await replica(['suspend-and-die', 'm', DECLARE, file], { PTC_ISOLATION: from })
      expect(first.signal, first.stderr).toBe('SIGKILL')
      const second = await replica(['resume', 'm', file, CONTINUE], { PTC_ISOLATION: to }, longer)
      expect(second.code, `${from} -> ${to}: ${second.stderr}`).toBe(0)
      expect(second.out?.value, `${from} -> ${to}`).toEqual([['a', 'b'], true, 42, 84])
    }
  }, 120_000)

  test('replicas sharing a filesystem store hand a session over when one is disposed', async () => {
    const one = await replica(['run', 'fs', DECLARE])
    expect(one.out?.value).toBe(1)
    const two = await replica(['run', 'fs', CONTINUE])
    expect(two.out?.pid).not.toBe(one.out?.pid)
    expect(two.out?.value).toEqual([['a', 'b'], true, 42, 84])
    expect(two.out?.session).toMatchObject({ fresh: false, runs: 2 })
  }, 90_000)

  test('a session live in one replica is refused in another sharing the filesystem store, then continues once the first lets it go', async () => {
    await handOverWhileHeld('fs-held')
  }, 90_000)

  test('a replica killed while holding a session: another on this machine takes it over at once (filesystem store)', async () => {
    await takeOverFromKilled('fs-killed')
  }, 90_000)

  test('three replicas running two sessions at once through a filesystem store never fork a session', async () => {
    await noForks({}, 'fs-hammer')
  }, 120_000)
})

const redisLookup = ensureRedisServer()
if ('reason' in redisLookup) console.warn(`session replicas over Redis skipped: ${redisLookup.reason}`)

describe.skipIf('reason' in redisLookup)('replicas sharing a Redis store', () => {
  let server: RedisServer | undefined
  beforeAll(async () => {
    if ('path' in redisLookup) server = await startRedis(redisLookup.path)
  }, 30_000)
  afterAll(() => server?.stop())

  test('a session made on one replica continues on another, and a third sees its state too', async () => {
    const env = { PTC_REDIS_PORT: String(server?.port), PTC_REDIS_PASSWORD: server?.password ?? '' }
    const one = await replica(['run', 'redis-session', DECLARE], env)
    expect(one.code, one.stderr).toBe(0)
    const two = await replica(['run', 'redis-session', CONTINUE], env)
    expect(two.out?.value).toEqual([['a', 'b'], true, 42, 84])
    const three = await replica(['run', 'redis-session', 'return names'], env)
    expect(three.out?.value).toEqual(['a', 'b'])
    expect(new Set([one.out?.pid, two.out?.pid, three.out?.pid]).size).toBe(3)
  }, 90_000) // three processes one after another: 20 s was not enough with two suites on two cores

  test('a session live in one replica is refused in another sharing Redis, then continues once the first lets it go', async () => {
    await handOverWhileHeld('redis-held', {
      PTC_REDIS_PORT: String(server?.port),
      PTC_REDIS_PASSWORD: server?.password ?? '',
    })
  }, 90_000)

  test('three replicas running two sessions at once through Redis never fork a session', async () => {
    await noForks({ PTC_REDIS_PORT: String(server?.port), PTC_REDIS_PASSWORD: server?.password ?? '' }, 'redis-hammer')
  }, 120_000)

  test('a replica killed while holding a session: another on this machine takes it over at once (Redis)', async () => {
    await takeOverFromKilled('redis-killed', {
      PTC_REDIS_PORT: String(server?.port),
      PTC_REDIS_PASSWORD: server?.password ?? '',
    })
  }, 90_000)
})
