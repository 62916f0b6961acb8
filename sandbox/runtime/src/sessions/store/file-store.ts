import { createHash, randomBytes } from 'node:crypto'
import { readdir, rename, stat, unlink } from 'node:fs/promises'
import { join, resolve } from 'node:path'
import { SandboxUsageError } from '../../errors.js'
import { SessionStoreError } from './errors.js'
import { claimFile, readClaim, removeLockDirectory, underClaimLock } from './file-claims.js'
import { MAX_PAYLOAD_BYTES, moveAside, readEntry, removeIfUnchanged, writeEntry } from './file-entries.js'
import { inDirectory, isMissing, makeDirectory, unlinkIfThere } from './file-system.js'
import { checkBytes, checkHolder, checkKey, claimTtl, ttlOf, type SessionClaim, type SessionStore } from './store.js'

/** Options of `createFileSessionStore`. */
export interface FileSessionStoreOptions {
  /** The folder of the entries; created with mode 0700 when missing. */
  directory: string
  /** The clock that TTLs are measured on, in epoch milliseconds (default `Date.now`). */
  now?: () => number
}

/** The names of entries (`_entryPath`), of claims (`_claimPath`) and of temporary files. */
const ENTRY_NAME = /^[0-9a-f]{64}\.session$/
const CLAIM_NAME = /^[0-9a-f]{64}\.claim$/
const LOCK_NAME = /^[0-9a-f]{64}\.claim\.lock$/
const TEMP_NAME = /^\.[0-9a-f]{16}\.(?:tmp|taken|claim)$/
/** A claim's lock being made (`underClaimLock`): a directory, renamed in place once it holds its token file. */
const TEMP_LOCK_NAME = /^\.[0-9a-f]{16}\.lock$/
/** A temporary file older than this is a crashed `set`'s. */
const STALE_TEMP_MS = 10 * 60_000

/**
 * A `SessionStore` of one file per key in `directory`, named by the key's SHA-256 (no key can name a path
 * outside it), mode 0600. A `set` writes a temporary file beside it, fsyncs it and renames it over the entry,
 * so a reader or a crash sees the old bytes or the new ones, never a mix. A file that is not a store file
 * is an error (`corrupt-entry`), never read as missing: `get` and `take` move it aside (`<file>.unreadable-<time>`,
 * which nothing of the store touches again), so that the key's next `set` does not replace what may be a later
 * build's state, and the error says where it went.
 */
export function createFileSessionStore(options: FileSessionStoreOptions): SessionStore {
  if (typeof options?.directory !== 'string' || options.directory === '')
    throw new SandboxUsageError('createFileSessionStore: directory must be a non-empty path')
  const directory = resolve(options.directory)
  const now = options.now ?? Date.now
  // Made before each write, not once: a directory removed under a running process must not fail every later write.
  // An existing one costs a stat.
  const ready = (): Promise<void> => makeDirectory(directory)

  return {
    async get(key) {
      return inDirectory(directory, async () => {
        checkKey(key)
        const file = _entryPath(directory, key)
        const entry = await readEntry(file, key, false).catch((error: unknown) => moveAside(file, file, error))
        if (entry === undefined) return undefined
        if (entry.expiresAt !== 0 && now() >= entry.expiresAt) {
          await removeIfUnchanged(file, entry.ino)
          return undefined
        }
        return entry.payload
      })
    },

    async set(key, bytes, setOptions) {
      checkKey(key)
      checkBytes(bytes)
      if (bytes.byteLength > MAX_PAYLOAD_BYTES)
        throw new SandboxUsageError(
          `the file session store holds at most ${MAX_PAYLOAD_BYTES} bytes under a key, not ${bytes.byteLength}`,
        )
      const ttl = ttlOf(setOptions)
      await ready()
      await writeEntry(directory, _entryPath(directory, key), bytes, ttl === undefined ? 0 : now() + ttl)
    },

    async take(key) {
      return inDirectory(directory, async () => {
        checkKey(key)
        const file = _entryPath(directory, key)
        // A rename is atomic: of several takers, one moves the file and the others find it gone.
        const taken = join(directory, `.${randomBytes(8).toString('hex')}.taken`)
        try {
          await rename(file, taken)
        } catch (error) {
          if (isMissing(error)) return undefined
          throw error
        }
        // Not a store file: moved aside, as get() does.
        const entry = await readEntry(taken, key, false, file).catch((error: unknown) => moveAside(taken, file, error))
        await unlink(taken).catch(() => {})
        if (entry === undefined || (entry.expiresAt !== 0 && now() >= entry.expiresAt)) return undefined
        return entry.payload
      })
    },

    async claim(key, holder, ttlMs, claimOptions): Promise<SessionClaim | undefined> {
      checkKey(key)
      checkHolder(holder)
      const ttl = claimTtl(ttlMs)
      const replaces = claimOptions?.replaces
      if (replaces !== undefined) checkHolder(replaces)
      await ready()
      return claimFile(directory, _claimPath(directory, key), key, holder, ttl, replaces, now)
    },

    async release(key, holder) {
      return inDirectory(directory, async () => {
        checkKey(key)
        checkHolder(holder)
        const file = _claimPath(directory, key)
        if ((await readClaim(file))?.holder !== holder) return
        await underClaimLock(file, async () => {
          if ((await readClaim(file))?.holder === holder) await unlinkIfThere(file)
        })
      })
    },

    async sweep() {
      return inDirectory(directory, async () => {
        let names: string[]
        try {
          names = await readdir(directory)
        } catch (error) {
          if (isMissing(error)) return 0
          throw error
        }
        let removed = 0
        for (const name of names) {
          const file = join(directory, name)
          if (ENTRY_NAME.test(name)) {
            // One unreadable entry does not stop the sweep: it is left for get() to report.
            const entry = await readEntry(file, name, true).catch(() => undefined)
            if (entry !== undefined && entry.expiresAt !== 0 && now() >= entry.expiresAt) {
              await removeIfUnchanged(file, entry.ino)
              removed++
            }
          } else if (CLAIM_NAME.test(name)) {
            const claim = await readClaim(file).catch(() => undefined)
            if (claim !== undefined && now() >= claim.expiresAt) {
              const gone = await underClaimLock(file, async () => {
                const current = await readClaim(file)
                if (current === undefined || now() < current.expiresAt) return false
                await unlinkIfThere(file)
                return true
              }).catch(() => false)
              if (gone) removed++
            }
          } else if (LOCK_NAME.test(name) || TEMP_LOCK_NAME.test(name)) {
            // A lock left by a process that crashed while it held it, or while it made it.
            const info = await stat(file).catch(() => undefined)
            if (info !== undefined && Date.now() - info.mtimeMs > STALE_TEMP_MS && (await removeLockDirectory(file)))
              removed++
          } else if (TEMP_NAME.test(name)) {
            // A temporary file of a set() (or a take()) that crashed before it was done (one in progress is younger).
            const info = await stat(file).catch(() => undefined)
            if (
              info !== undefined &&
              now() - info.mtimeMs > STALE_TEMP_MS &&
              (await unlink(file).then(
                () => true,
                () => false,
              ))
            )
              removed++
          }
        }
        return removed
      })
    },

    async delete(key) {
      return inDirectory(directory, async () => {
        checkKey(key)
        const file = _entryPath(directory, key)
        let live = true
        try {
          const entry = await readEntry(file, key, true)
          if (entry === undefined) return false
          live = entry.expiresAt === 0 || now() < entry.expiresAt
        } catch (error) {
          if (!(error instanceof SessionStoreError)) throw error // a corrupt entry is deleted like any other
        }
        try {
          await unlink(file)
        } catch (error) {
          if (isMissing(error)) return false
          throw error
        }
        return live
      })
    },
  }
}

/** The file of `key` in `directory`. Internal; tests use it to reach the file of a key. */
export function _entryPath(directory: string, key: string): string {
  return join(directory, `${createHash('sha256').update(key, 'utf8').digest('hex')}.session`)
}

/** The claim file of `key` in `directory`. Internal; tests use it. */
export function _claimPath(directory: string, key: string): string {
  return join(directory, `${createHash('sha256').update(key, 'utf8').digest('hex')}.claim`)
}
