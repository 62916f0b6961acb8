import { SandboxUsageError } from '../../errors.js'
import {
  checkBytes,
  checkHolder,
  checkKey,
  claimTtl,
  ttlOf,
  type SessionClaim,
  type SessionClaimOptions,
  type SessionStore,
} from './store.js'

/**
 * The part of a Redis client the Redis store uses. An `ioredis` `Redis` (or `Cluster`) instance has it;
 * so can an adapter over another client.
 */
export interface RedisSessionClient {
  /** GET, the value as a Buffer; `null` when missing. */
  getBuffer(key: string): Promise<Buffer | null>
  /** SET without expiry. */
  set(key: string, value: Buffer): Promise<unknown>
  /** SET with an expiry in milliseconds (`PX`). */
  set(key: string, value: Buffer, mode: 'PX', milliseconds: number): Promise<unknown>
  /** DEL; the number of keys removed. */
  del(key: string): Promise<number>
  /** GETDEL (Redis 6.2+), the value as a Buffer; `null` when missing. Optional: with it, the store can `take`. */
  getdelBuffer?(key: string): Promise<Buffer | null>
  /** EVAL of a Lua script. Optional: with it, the store can `claim` and `release` sessions. */
  eval?(script: string, keys: number, ...args: (string | number)[]): Promise<unknown>
}

/** Options of `createRedisSessionStore`. */
export interface RedisSessionStoreOptions {
  /** A connected client; the store never closes it. */
  client: RedisSessionClient
  /** Put before every key (default `ptc:session:`). */
  prefix?: string
  /**
   * Put before `prefix` and the key of a session's claim (default `ptc:session-claim:`); neither prefix
   * may start with the other, so that no session key names a claim.
   */
  claimPrefix?: string
}

/** The key prefix of the Redis store when none is given. */
export const DEFAULT_REDIS_PREFIX = 'ptc:session:'
/** The claim key prefix of the Redis store when none is given. */
export const DEFAULT_REDIS_CLAIM_PREFIX = 'ptc:session-claim:'

/**
 * Sets the claim when it is free, the holder's or the replaced one's (ARGV[3]); else returns the claim's holder and
 * its TTL.
 */
const CLAIM_SCRIPT = `local v = redis.call('GET', KEYS[1])
if v == false or v == ARGV[1] or v == ARGV[3] then redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2]) return false end
return {v, redis.call('PTTL', KEYS[1])}`
/** Deletes the claim when it is the holder's. */
const RELEASE_SCRIPT = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0`

/** A `SessionStore` in Redis: the value of `prefix + key` is the bytes, and `ttlMs` is Redis's own expiry (`PX`). */
export function createRedisSessionStore(options: RedisSessionStoreOptions): SessionStore {
  const client = options?.client
  if (typeof client?.getBuffer !== 'function' || typeof client.set !== 'function' || typeof client.del !== 'function') {
    throw new SandboxUsageError(
      'createRedisSessionStore: client must have getBuffer, set and del (an ioredis Redis instance does)',
    )
  }
  const prefix = options.prefix ?? DEFAULT_REDIS_PREFIX
  if (typeof prefix !== 'string') throw new SandboxUsageError('createRedisSessionStore: prefix must be a string')
  const claimPrefix = options.claimPrefix ?? DEFAULT_REDIS_CLAIM_PREFIX
  if (typeof claimPrefix !== 'string' || claimPrefix === '')
    throw new SandboxUsageError('createRedisSessionStore: claimPrefix must be a non-empty string')
  if (claimPrefix.startsWith(prefix) || prefix.startsWith(claimPrefix)) {
    throw new SandboxUsageError(
      `createRedisSessionStore: prefix ${JSON.stringify(prefix)} and claimPrefix ${JSON.stringify(claimPrefix)} ` +
        'overlap (one starts with the other), so a session key could name a claim: give them distinct prefixes',
    )
  }
  const evaluate = typeof client.eval === 'function' ? client.eval.bind(client) : undefined
  return {
    async get(key) {
      checkKey(key)
      return (await client.getBuffer(prefix + key)) ?? undefined
    },
    async set(key, bytes, setOptions) {
      checkKey(key)
      checkBytes(bytes)
      const ttl = ttlOf(setOptions)
      const value = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)
      if (ttl === undefined) await client.set(prefix + key, value)
      else await client.set(prefix + key, value, 'PX', ttl)
    },
    async delete(key) {
      checkKey(key)
      return (await client.del(prefix + key)) > 0
    },
    ...(typeof client.getdelBuffer === 'function' && {
      take: async (key: string) => {
        checkKey(key)
        return (
          (await (client.getdelBuffer as NonNullable<RedisSessionClient['getdelBuffer']>)(prefix + key)) ?? undefined
        )
      },
    }),
    ...(evaluate !== undefined && {
      claim: async (
        key: string,
        holder: string,
        ttlMs: number,
        claimOptions?: SessionClaimOptions,
      ): Promise<SessionClaim | undefined> => {
        checkKey(key)
        checkHolder(holder)
        const replaces = claimOptions?.replaces
        if (replaces !== undefined) checkHolder(replaces)
        // A holder id is never empty: "" replaces nothing.
        const reply = await evaluate(
          CLAIM_SCRIPT,
          1,
          claimPrefix + prefix + key,
          holder,
          claimTtl(ttlMs),
          replaces ?? '',
        )
        if (reply === null || reply === undefined) return undefined
        const [other, pttl] = Array.isArray(reply) ? reply : []
        if (other === undefined || pttl === undefined)
          throw new Error(
            `Redis answered the claim of session ${JSON.stringify(key)} with ${typeof reply}, not a holder and a TTL`,
          )
        return { holder: String(other), expiresInMs: Math.max(0, Number(pttl)) }
      },
      release: async (key: string, holder: string): Promise<void> => {
        checkKey(key)
        checkHolder(holder)
        await evaluate(RELEASE_SCRIPT, 1, claimPrefix + prefix + key, holder)
      },
    }),
  }
}
