import { SandboxUsageError } from '../errors.js'
import { checkBytes, checkKey, ttlOf, type SessionStore } from './store.js'

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
}

/** Options of `createRedisSessionStore`. */
export interface RedisSessionStoreOptions {
  /** A connected client; the store never closes it. */
  client: RedisSessionClient
  /** Put before every key (default `ptc:session:`). */
  prefix?: string
}

/** The key prefix of the Redis store when none is given. */
export const DEFAULT_REDIS_PREFIX = 'ptc:session:'

/** A `SessionStore` in Redis: the value of `prefix + key` is the bytes, and `ttlMs` is Redis's own expiry (`PX`). */
export function createRedisSessionStore(options: RedisSessionStoreOptions): SessionStore {
  const client = options?.client
  if (typeof client?.getBuffer !== 'function' || typeof client.set !== 'function' || typeof client.del !== 'function') {
    throw new SandboxUsageError('createRedisSessionStore: client must have getBuffer, set and del (an ioredis Redis instance does)')
  }
  const prefix = options.prefix ?? DEFAULT_REDIS_PREFIX
  if (typeof prefix !== 'string') throw new SandboxUsageError('createRedisSessionStore: prefix must be a string')
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
        return (await (client.getdelBuffer as NonNullable<RedisSessionClient['getdelBuffer']>)(prefix + key)) ?? undefined
      },
    }),
  }
}
