import { createHash, randomBytes } from 'node:crypto'
import { constants as fs } from 'node:fs'
import {
  chmod,
  link,
  lstat,
  mkdir,
  open,
  readdir,
  rename,
  rmdir,
  stat,
  unlink,
  writeFile,
  type FileHandle,
} from 'node:fs/promises'
import { dirname, join, resolve } from 'node:path'
import { SandboxUsageError } from '../errors.js'
import { SessionStoreError } from './errors.js'
import { checkBytes, checkHolder, checkKey, claimTtl, ttlOf, type SessionClaim, type SessionStore } from './store.js'

/** Options of `createFileSessionStore`. */
export interface FileSessionStoreOptions {
  /** The folder of the entries; created with mode 0700 when missing. */
  directory: string
  /** The clock that TTLs are measured on, in epoch milliseconds (default `Date.now`). */
  now?: () => number
}

const MAGIC = Buffer.from('PTSF', 'latin1')
const VERSION = 1
/* A file: magic "PTSF", version byte, 3 zero bytes, expiry (epoch ms, 0 = none) and payload length as u64 BE, payload. */
const HEADER_BYTES = 24
/** The names of entries (`_entryPath`), of claims (`_claimPath`) and of temporary files. */
const ENTRY_NAME = /^[0-9a-f]{64}\.session$/
const CLAIM_NAME = /^[0-9a-f]{64}\.claim$/
const LOCK_NAME = /^[0-9a-f]{64}\.claim\.lock$/
const TEMP_NAME = /^\.[0-9a-f]{16}\.(?:tmp|taken|claim)$/
/** A claim's lock being made (`underClaimLock`): a directory, renamed in place once it holds its token file. */
const TEMP_LOCK_NAME = /^\.[0-9a-f]{16}\.lock$/
/* A claim file: "PTSC " then JSON { holder, expiresAt } (epoch ms). */
const CLAIM_MAGIC = 'PTSC '
/** Tries of `claim` whose claim file changed under it (another process claimed or released at that moment). */
const CLAIM_TRIES = 8
/** A claim's lock older than this was left by a process that died holding it (a holder keeps it for milliseconds). */
const LOCK_STALE_MS = 10_000
/** How long `claim` and `release` wait for a claim's lock before they fail as `unavailable`. */
const LOCK_WAIT_MS = 5_000
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
  // Made before each write, not once: a directory removed under a running process (an operator cleaning up) failed
  // every set and claim with ENOENT until the process restarted. An existing one costs a stat.
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
      const header = Buffer.alloc(HEADER_BYTES)
      MAGIC.copy(header, 0)
      header.writeUInt8(VERSION, 4)
      header.writeBigUInt64BE(BigInt(ttl === undefined ? 0 : now() + ttl), 8)
      header.writeBigUInt64BE(BigInt(bytes.byteLength), 16)
      const file = _entryPath(directory, key)
      const temp = join(directory, `.${randomBytes(8).toString('hex')}.tmp`)
      try {
        const handle = await open(temp, 'wx', 0o600)
        try {
          await handle.chmod(0o600) // exact whatever the umask
          await writeAll(handle, header)
          await writeAll(handle, bytes)
          await handle.sync()
        } finally {
          await handle.close()
        }
        await rename(temp, file)
      } catch (error) {
        await unlink(temp).catch(() => {})
        throw error
      }
      await syncDirectory(directory)
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
      const file = _claimPath(directory, key)
      const bodyNow = (): string => `${CLAIM_MAGIC}${JSON.stringify({ holder, expiresAt: now() + ttl })}`
      for (let attempt = 0; attempt < CLAIM_TRIES; attempt++) {
        const body = bodyNow()
        // Written aside, then linked in place: a link fails when the name exists, and nobody reads a half-written claim.
        const temp = join(directory, `.${randomBytes(8).toString('hex')}.claim`)
        await writeFile(temp, body, { mode: 0o600, flag: 'wx' })
        try {
          await link(temp, file)
          return undefined
        } catch (error) {
          if ((error as { code?: unknown }).code !== 'EEXIST') throw error
        } finally {
          await unlink(temp).catch(() => {})
        }
        // Held: renewed, refused or taken over under the claim's lock, so that no two processes change it at once.
        const outcome = await underClaimLock(file, async (): Promise<SessionClaim | 'held' | 'free'> => {
          const current = await readClaim(file)
          if (current === undefined) return 'free' // released meanwhile
          if (current.holder === holder) {
            // A renewal, for ttl from now: the wait for the lock (up to LOCK_WAIT_MS) does not shorten it.
            await replaceFile(directory, file, bodyNow())
            return 'held'
          }
          const left = current.expiresAt - now()
          if (left > 0 && current.holder !== replaces) return { holder: current.holder, expiresInMs: left }
          await unlinkIfThere(file) // expired (or its holder gone): free for whoever links a claim first
          return 'free'
        })
        if (outcome === 'held') return undefined
        if (outcome !== 'free') return outcome
      }
      throw new SessionStoreError(
        'unavailable',
        `the claim of session ${JSON.stringify(key)} changed ${CLAIM_TRIES} times while it was being claimed: too many processes claim it at once`,
      )
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

/**
 * The claim in `file`, `undefined` when there is none. A file that is not a claim (nothing of this store
 * writes one) counts as an expired claim: it never blocks a session.
 */
async function readClaim(file: string): Promise<{ holder: string; expiresAt: number } | undefined> {
  return readOpen(file, async (handle, { size, regular }) => {
    const text = !regular || size > 4096 ? '' : await handle.readFile('utf8')
    try {
      const parsed = text.startsWith(CLAIM_MAGIC)
        ? (JSON.parse(text.slice(CLAIM_MAGIC.length)) as { holder?: unknown; expiresAt?: unknown })
        : undefined
      if (typeof parsed?.holder === 'string' && typeof parsed.expiresAt === 'number')
        return { holder: parsed.holder, expiresAt: parsed.expiresAt }
    } catch {
      // not JSON: below
    }
    return { holder: '', expiresAt: 0 }
  })
}

/**
 * `body`'s result, run while this process holds the lock of the claim in `file`: a directory beside it that
 * holds one file, named by its holder's random token. Renewals, releases and takeovers of a claim happen under
 * it, so that none removes a claim another has just made; a fresh claim needs no lock (its link fails when one
 * exists). The lock is made aside, with its token file, and renamed in place: a rename fails onto a directory
 * that is not empty (held), and replaces an empty one (its holder was leaving). A lock whose token file is
 * older than `LOCK_STALE_MS` was left by a process that died in it: it is removed by unlinking that token
 * (only one process can) and then the directory, which fails when another process has renamed its own lock
 * in meanwhile. So a stale lock is never removed as a fresh one, however many processes find it stale at once.
 */
async function underClaimLock<T>(file: string, body: () => Promise<T>): Promise<T> {
  const lock = `${file}.lock`
  const token = randomBytes(8).toString('hex')
  const staging = join(dirname(file), `.${token}.lock`)
  await mkdir(staging, { mode: 0o700 })
  await writeFile(join(staging, token), '', { mode: 0o600 })
  const since = Date.now()
  for (;;) {
    try {
      await rename(staging, lock)
      break
    } catch (error) {
      const code = (error as { code?: unknown }).code
      if (code !== 'ENOTEMPTY' && code !== 'EEXIST') {
        await removeLockDirectory(staging)
        throw error
      }
    }
    const [holder] = await readdir(lock).catch(() => [])
    if (holder !== undefined) {
      const info = await stat(join(lock, holder)).catch(() => undefined)
      if (info !== undefined && Date.now() - info.mtimeMs > LOCK_STALE_MS) {
        if (
          await unlink(join(lock, holder)).then(
            () => true,
            () => false,
          )
        )
          await rmdir(lock).catch(() => {})
        continue
      }
    }
    if (Date.now() - since > LOCK_WAIT_MS) {
      await removeLockDirectory(staging)
      throw new SessionStoreError(
        'unavailable',
        `the claim file ${file} stayed locked by another process for ${LOCK_WAIT_MS} ms`,
      )
    }
    await new Promise((resolve) => setTimeout(resolve, 1 + Math.random() * 5))
  }
  try {
    return await body()
  } finally {
    // The token first: from then on another process's lock may replace the empty directory, which then stays.
    await unlink(join(lock, token)).catch(() => {})
    await rmdir(lock).catch(() => {})
  }
}

/** Removes a claim lock's directory and the token files in it (a stale lock, or one never renamed in place). */
async function removeLockDirectory(dir: string): Promise<boolean> {
  for (const name of await readdir(dir).catch(() => [])) await unlink(join(dir, name)).catch(() => {})
  return rmdir(dir).then(
    () => true,
    () => false,
  )
}

async function unlinkIfThere(file: string): Promise<void> {
  try {
    await unlink(file)
  } catch (error) {
    if (!isMissing(error)) throw error
  }
}

/** Writes `body` over `file` through a temporary file and a rename. */
async function replaceFile(directory: string, file: string, body: string): Promise<void> {
  const temp = join(directory, `.${randomBytes(8).toString('hex')}.claim`)
  try {
    await writeFile(temp, body, { mode: 0o600, flag: 'wx' })
    await rename(temp, file)
  } catch (error) {
    await unlink(temp).catch(() => {})
    throw error
  }
}

interface Entry {
  expiresAt: number
  payload: Uint8Array
  ino: number
}

/** The entry in `file`, `undefined` when there is none; with `headerOnly`, an empty payload. `named`: the entry's own file, when `file` is where a take moved it. */
async function readEntry(file: string, key: string, headerOnly: boolean, named = file): Promise<Entry | undefined> {
  return readOpen(file, async (handle, { ino, size, regular }) => {
    const corrupt = (reason: string): SessionStoreError => {
      const error = new SessionStoreError(
        'corrupt-entry',
        `the session store file ${named} (key ${JSON.stringify(key)}) is not a store file: ${reason}`,
      )
      corruptInodes.set(error, ino)
      return error
    }
    // A pipe or a device would be read forever, or never answer.
    if (!regular) throw corrupt('it is not a regular file')
    // The header first: a file that is not a store file, however large, is not read whole.
    const header = await readAt(handle, 0, Math.min(size, HEADER_BYTES))
    if (header.length < HEADER_BYTES)
      throw corrupt(`it has ${header.length} bytes, fewer than the ${HEADER_BYTES}-byte header`)
    if (!header.subarray(0, 4).equals(MAGIC)) throw corrupt('it does not start with "PTSF"')
    if (header[4] !== VERSION) throw corrupt(`its version is ${header[4]}, and this build reads version ${VERSION}`)
    const length = Number(header.readBigUInt64BE(16))
    if (size !== HEADER_BYTES + length)
      throw corrupt(`it declares ${length} bytes of payload but holds ${size - HEADER_BYTES}`)
    // Node reads no more into one buffer: such a file was refused on every read, and never moved aside.
    if (length > MAX_PAYLOAD_BYTES)
      throw corrupt(`its payload is ${length} bytes, more than the ${MAX_PAYLOAD_BYTES} a store file may hold`)
    const payload = headerOnly ? new Uint8Array(0) : await readAt(handle, HEADER_BYTES, length)
    if (payload.length !== (headerOnly ? 0 : length))
      throw corrupt(`it declares ${length} bytes of payload but holds ${payload.length}`)
    return { expiresAt: Number(header.readBigUInt64BE(8)), payload, ino }
  })
}

/** The largest payload a store file may hold: what Node reads into one buffer (2 GiB - 1). */
const MAX_PAYLOAD_BYTES = 2 ** 31 - 1

/** Up to `length` bytes of the file at `position` (fewer where it ends). */
async function readAt(handle: FileHandle, position: number, length: number): Promise<Buffer> {
  const data = Buffer.allocUnsafe(length)
  let at = 0
  while (at < length) {
    const { bytesRead } = await handle.read(data, at, length - at, position + at)
    if (bytesRead === 0) break
    at += bytesRead
  }
  return at === length ? data : data.subarray(0, at)
}

/** The inode of the file each `corrupt-entry` error of `readEntry` was about. */
const corruptInodes = new WeakMap<Error, number>()

/**
 * Throws `error`; a corrupt entry's (read from `from`, the entry's `file` or where a take moved it) first goes
 * aside, beside `file`, and the error says where (or, when it could not be moved, that it stays).
 */
async function moveAside(from: string, file: string, error: unknown): Promise<never> {
  if (!(error instanceof SessionStoreError) || error.code !== 'corrupt-entry') throw error
  const aside = `${file}.unreadable-${Date.now()}`
  // Not a file a set() put there since it was read.
  const same = (await stat(from).catch(() => undefined))?.ino === corruptInodes.get(error)
  const where = await (same ? rename(from, aside) : Promise.reject(new Error('replaced'))).then(
    () => `It was moved aside to ${aside}: inspect it, then delete it`,
    () => 'It was left as it is: inspect it, then delete it (delete() or set() of the key replaces it)',
  )
  throw new SessionStoreError('corrupt-entry', `${error.message}. ${where}`, { cause: error })
}

/**
 * What `read` makes of `file`, opened for reading (and closed after), with its inode, size and whether it is a
 * regular file; `undefined` when there is no such file. Opened without blocking: a named pipe put in place of a
 * file (which a plain open waits on until a writer comes, holding a thread of libuv's pool and the process
 * with it) opens at once, as what it is.
 */
async function readOpen<T>(
  file: string,
  read: (handle: FileHandle, info: { ino: number; size: number; regular: boolean }) => Promise<T>,
): Promise<T | undefined> {
  let handle: FileHandle
  try {
    handle = await open(file, fs.O_RDONLY | fs.O_NONBLOCK)
  } catch (error) {
    if (isMissing(error)) return undefined
    throw error
  }
  try {
    const info = await handle.stat()
    return await read(handle, { ino: info.ino, size: info.size, regular: info.isFile() })
  } finally {
    await handle.close()
  }
}

/** Deletes an expired entry unless a `set` replaced it since it was read (same inode), as far as a file system lets one tell. */
async function removeIfUnchanged(file: string, ino: number): Promise<void> {
  const current = await stat(file).catch(() => undefined)
  if (current?.ino !== ino) return
  try {
    await unlink(file)
  } catch (error) {
    if (!isMissing(error)) throw error
  }
}

async function makeDirectory(directory: string): Promise<void> {
  let created: string | undefined
  try {
    created = await mkdir(directory, { recursive: true, mode: 0o700 })
  } catch (error) {
    // mkdir says "file already exists" of a file in its place, and "no such file" of a symbolic link to nothing.
    const code = (error as { code?: unknown } | null)?.code
    if (code !== 'EEXIST' && code !== 'ENOENT' && code !== 'ENOTDIR') throw error
    throw await notADirectory(directory, error)
  }
  if (created !== undefined) await chmod(directory, 0o700) // exact whatever the umask
}

/**
 * `error` (of an operation in `directory`), or a `SessionStoreError` `unavailable` that says what is in the
 * directory's place when it is not one (the raw error said ENOTDIR of an entry's path, EEXIST or ENOENT of mkdir).
 */
async function notADirectory(directory: string, error: unknown): Promise<unknown> {
  const what = await lstat(directory).then(
    (info) =>
      info.isSymbolicLink() ? 'it is a symbolic link to nothing' : info.isDirectory() ? undefined : 'it is a file',
    () => 'a part of its path is a file',
  )
  if (what === undefined) return error
  return new SessionStoreError(
    'unavailable',
    `the session store's directory ${directory} is not a directory (${what}): nothing can be saved there until it is one`,
    { cause: error },
  )
}

/** Runs `operation`; an ENOTDIR it fails with is told as the directory's problem (`notADirectory`). */
async function inDirectory<T>(directory: string, operation: () => Promise<T>): Promise<T> {
  try {
    return await operation()
  } catch (error) {
    if ((error as { code?: unknown } | null)?.code === 'ENOTDIR') throw await notADirectory(directory, error)
    throw error
  }
}

async function writeAll(handle: FileHandle, bytes: Uint8Array): Promise<void> {
  for (let at = 0; at < bytes.byteLength; ) {
    const { bytesWritten } = await handle.write(bytes, at, bytes.byteLength - at)
    at += bytesWritten
  }
}

/** Makes a rename durable. Best effort: some file systems refuse to fsync a directory. */
async function syncDirectory(directory: string): Promise<void> {
  try {
    const handle = await open(directory, 'r')
    try {
      await handle.sync()
    } finally {
      await handle.close()
    }
  } catch {
    // the rename itself has happened; only its durability across a power loss is in doubt
  }
}

function isMissing(error: unknown): boolean {
  return (error as { code?: unknown } | null)?.code === 'ENOENT'
}
