import { spawn } from 'node:child_process'
import { createHash, randomBytes } from 'node:crypto'
import { createRequire } from 'node:module'
import { fileURLToPath } from 'node:url'
import { Redis } from 'ioredis'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { ensureRedisServer, startRedis, type RedisServer } from '../../../../../scripts/ensure-redis.js'
import { SessionStoreError } from './errors.js'
import { claimCases } from './fixtures/claims.js'
import {
  DEFAULT_REDIS_CLAIM_PREFIX,
  DEFAULT_REDIS_PREFIX,
  createRedisSessionStore,
  type RedisSessionClient,
} from './redis-store.js'
import { openSnapshot } from '../snapshot/open.js'
import { sealSnapshot } from '../snapshot/seal.js'

// Found (or installed) while the file is collected, so that a machine without it skips the suite, saying why.
const lookup = ensureRedisServer()
if ('reason' in lookup) console.warn(`redis store tests skipped: ${lookup.reason}`)

describe.skipIf('reason' in lookup)('redis store, against a real redis-server on loopback', () => {
  let server: RedisServer | undefined
  let redis: Redis
  const key = randomBytes(32)
  const identity = { build: 'build-7', session: 'session-r' }

  beforeAll(async () => {
    if (!('path' in lookup)) return
    server = await startRedis(lookup.path)
    redis = new Redis({
      host: '127.0.0.1',
      port: server.port,
      password: server.password,
      lazyConnect: true,
      maxRetriesPerRequest: 2,
    })
    await redis.connect()
  })

  afterAll(async () => {
    await redis?.quit().catch(() => {})
    await server?.stop()
  })

  /** Runs `body` in a separate node process with a connected `store`, `Redis`, `openSnapshot` and `sealSnapshot`; its stdout. */
  function inChild(body: string): Promise<string> {
    const session = fileURLToPath(new URL('../index.ts', import.meta.url))
    const ioredis = createRequire(import.meta.url).resolve('ioredis')
    const script = [
      `import { createRequire } from 'node:module'`,
      `const { createRedisSessionStore, openSnapshot, sealSnapshot } = await import(${JSON.stringify(session)})`,
      `const { Redis } = createRequire(${JSON.stringify(ioredis)})(${JSON.stringify(ioredis)})`,
      `const redis = new Redis({ host: '127.0.0.1', port: Number(process.env.PTC_REDIS_PORT), password: process.env.PTC_REDIS_PASSWORD })`,
      `const store = createRedisSessionStore({ client: redis })`,
      `const key = Buffer.from(process.env.PTC_SNAPSHOT_KEY, 'hex')`,
      `const identity = ${JSON.stringify(identity)}`,
      `try {`,
      body,
      `} finally { await redis.quit() }`,
    ].join('\n')
    const env = {
      ...process.env,
      NODE_OPTIONS: '',
      PTC_REDIS_PORT: String(server?.port),
      PTC_REDIS_PASSWORD: server?.password ?? '',
      PTC_SNAPSHOT_KEY: key.toString('hex'),
    }
    return new Promise((resolve, reject) => {
      const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
        env,
        stdio: ['ignore', 'pipe', 'pipe'],
      })
      let stdout = ''
      let stderr = ''
      child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()))
      child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()))
      child.once('error', reject)
      child.once('exit', (code) =>
        code === 0 ? resolve(stdout.trim()) : reject(new Error(`child exited ${code}: ${stderr}`)),
      )
    })
  }

  test('an ioredis Redis is a RedisSessionClient', () => {
    const client: RedisSessionClient = redis // checked by tsc
    expect(createRedisSessionStore({ client })).toBeTypeOf('object')
  })

  test('set, get, delete of binary values under the default prefix', async () => {
    const store = createRedisSessionStore({ client: redis })
    const bytes = Buffer.from(Array.from({ length: 256 }, (_, i) => i))
    expect(await store.get('k1')).toBeUndefined()
    await store.set('k1', bytes)
    expect(Buffer.from((await store.get('k1')) ?? []).equals(bytes)).toBe(true)
    expect((await redis.getBuffer(`${DEFAULT_REDIS_PREFIX}k1`))?.equals(bytes)).toBe(true)
    expect(await store.delete('k1')).toBe(true)
    expect(await store.delete('k1')).toBe(false)
    expect(await store.get('k1')).toBeUndefined()
  })

  test('take is GETDEL: of many takers in parallel one gets the value; a client without getdelBuffer has no take', async () => {
    const store = createRedisSessionStore({ client: redis })
    await store.set('once', Buffer.from('the state'))
    const takers = await Promise.all(Array.from({ length: 8 }, () => store.take?.('once')))
    expect(takers.filter((t) => t !== undefined).map((t) => Buffer.from(t as Uint8Array).toString())).toEqual([
      'the state',
    ])
    expect(await store.get('once')).toBeUndefined()
    const { getdelBuffer: _getdel, ...plain } = {
      getBuffer: redis.getBuffer.bind(redis),
      set: redis.set.bind(redis),
      del: redis.del.bind(redis),
      getdelBuffer: redis.getdelBuffer.bind(redis),
    }
    expect(createRedisSessionStore({ client: plain as RedisSessionClient }).take).toBeUndefined()
  })

  test('a prefix keeps stores apart', async () => {
    const a = createRedisSessionStore({ client: redis, prefix: 'app-a:' })
    const b = createRedisSessionStore({ client: redis, prefix: 'app-b:' })
    await a.set('same', Buffer.from('a'))
    expect(await b.get('same')).toBeUndefined()
    expect((await redis.getBuffer('app-a:same'))?.toString()).toBe('a')
  })

  test('ttlMs becomes a PX expiry, rounded up to a whole millisecond; no ttlMs, no expiry', async () => {
    const store = createRedisSessionStore({ client: redis })
    await store.set('ttl', Buffer.from('x'), { ttlMs: 60_000 })
    const pttl = await redis.pttl(`${DEFAULT_REDIS_PREFIX}ttl`)
    expect(pttl).toBeGreaterThan(0)
    expect(pttl).toBeLessThanOrEqual(60_000)
    await store.set('none', Buffer.from('y'))
    expect(await redis.pttl(`${DEFAULT_REDIS_PREFIX}none`)).toBe(-1)
    const sent: unknown[][] = []
    const recording: RedisSessionClient = {
      getBuffer: (k) => redis.getBuffer(k),
      del: (k) => redis.del(k),
      set: (k: string, value: Buffer, ...expiry: [] | ['PX', number]) => {
        sent.push(expiry)
        return expiry.length === 0 ? redis.set(k, value) : redis.set(k, value, ...expiry)
      },
    }
    await createRedisSessionStore({ client: recording }).set('rounded', Buffer.from('z'), { ttlMs: 1500.2 })
    expect(sent).toEqual([['PX', 1501]])
  })

  test('bad keys are refused before reaching Redis', async () => {
    const store = createRedisSessionStore({ client: redis })
    await expect(store.get('')).rejects.toBeInstanceOf(SessionStoreError)
    await expect(store.set('x'.repeat(2000), new Uint8Array(1))).rejects.toThrow(/at most 1024 UTF-8 bytes/)
  })

  test('a 10 MiB sealed snapshot goes through Redis and opens', async () => {
    const store = createRedisSessionStore({ client: redis })
    const payload = randomBytes(10 * 1024 * 1024)
    await store.set('big', sealSnapshot(payload, identity, key))
    expect(
      Buffer.from(openSnapshot((await store.get('big')) ?? new Uint8Array(0), identity, key)).equals(payload),
    ).toBe(true)
  })

  test('a snapshot a separate process wrote is read and opened here', async () => {
    const printed = await inChild(`
      const payload = Buffer.from(JSON.stringify({ from: 'child', pid: process.pid, data: 'x'.repeat(100_000) }))
      await store.set('from-child', sealSnapshot(payload, identity, key))
      console.log(process.pid)`)
    const payload = JSON.parse(
      Buffer.from(
        openSnapshot(
          (await createRedisSessionStore({ client: redis }).get('from-child')) ?? new Uint8Array(0),
          identity,
          key,
        ),
      ).toString(),
    ) as { from: string; pid: number }
    expect(payload.from).toBe('child')
    expect(payload.pid).toBe(Number(printed))
    expect(payload.pid).not.toBe(process.pid)
  })

  describe('claims', () => {
    // Redis expires the claims itself: a TTL long enough for 16 claims at once on a loaded machine, then a wait past it.
    const ttl = 1500
    claimCases(
      () => createRedisSessionStore({ client: redis }),
      () => new Promise((resolve) => setTimeout(resolve, ttl + 100)),
      ttl,
    )

    test('a claim is a key of its own under claimPrefix + prefix, with its PX expiry; overlapping prefixes are refused; no EVAL, no claims', async () => {
      const store = createRedisSessionStore({ client: redis, prefix: 'app-c:' })
      expect(await store.claim?.('k', 'holder-a', 60_000)).toBeUndefined()
      expect(await redis.get(`${DEFAULT_REDIS_CLAIM_PREFIX}app-c:k`)).toBe('holder-a')
      expect(await redis.pttl(`${DEFAULT_REDIS_CLAIM_PREFIX}app-c:k`)).toBeGreaterThan(50_000)
      expect(
        await createRedisSessionStore({ client: redis, prefix: 'app-d:' }).claim?.('k', 'holder-b', 1000),
      ).toBeUndefined()
      for (const [prefix, claimPrefix] of [
        ['ptc:', undefined],
        ['', undefined],
        ['a:', 'a:claims:'],
        ['a:claims:', 'a:'],
      ] as const) {
        expect(() =>
          createRedisSessionStore({ client: redis, prefix, ...(claimPrefix !== undefined && { claimPrefix }) }),
        ).toThrow(/overlap/)
      }
      const { eval: _eval, ...plain } = {
        getBuffer: redis.getBuffer.bind(redis),
        set: redis.set.bind(redis),
        del: redis.del.bind(redis),
        eval: redis.eval.bind(redis),
      }
      const without = createRedisSessionStore({ client: plain as RedisSessionClient })
      expect(without.claim).toBeUndefined()
      expect(without.release).toBeUndefined()
    })

    test("a separate process's claim is refused here until it releases it", async () => {
      const printed = await inChild(`
        console.log(String(await store.claim('across', 'child-holder', 60000)))`)
      expect(printed).toBe('undefined')
      const store = createRedisSessionStore({ client: redis })
      expect((await store.claim?.('across', 'parent-holder', 1000))?.holder).toBe('child-holder')
      await inChild(`await store.release('across', 'child-holder')`)
      expect(await store.claim?.('across', 'parent-holder', 1000)).toBeUndefined()
    })
  })

  test('a snapshot written here is read and opened by a separate process', async () => {
    const payload = randomBytes(256 * 1024)
    await createRedisSessionStore({ client: redis }).set('from-parent', sealSnapshot(payload, identity, key))
    const printed = await inChild(`
      const opened = openSnapshot(await store.get('from-parent'), identity, key)
      const { createHash } = await import('node:crypto')
      console.log(createHash('sha256').update(opened).digest('hex'))`)
    expect(printed).toBe(createHash('sha256').update(payload).digest('hex'))
  })
})
