import { randomBytes } from 'node:crypto'
import { link, mkdir, readdir, rename, rmdir, stat, unlink, writeFile } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import { SessionStoreError } from './errors.js'
import { readOpen, unlinkIfThere } from './file-system.js'
import type { SessionClaim } from './store.js'

/* A claim file: "PTSC " then JSON { holder, expiresAt } (epoch ms). */
const CLAIM_MAGIC = 'PTSC '
/** Tries of `claim` whose claim file changed under it (another process claimed or released at that moment). */
const CLAIM_TRIES = 8
/** A claim's lock older than this was left by a process that died holding it (a holder keeps it for milliseconds). */
const LOCK_STALE_MS = 10_000
/** How long `claim` and `release` wait for a claim's lock before they fail as `unavailable`. */
const LOCK_WAIT_MS = 5_000

/**
 * The claim in `file`, `undefined` when there is none. A file that is not a claim (nothing of this store
 * writes one) counts as an expired claim: it never blocks a session.
 */
export async function readClaim(file: string): Promise<{ holder: string; expiresAt: number } | undefined> {
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
export async function underClaimLock<T>(file: string, body: () => Promise<T>): Promise<T> {
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
export async function removeLockDirectory(dir: string): Promise<boolean> {
  for (const name of await readdir(dir).catch(() => [])) await unlink(join(dir, name)).catch(() => {})
  return rmdir(dir).then(
    () => true,
    () => false,
  )
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

/**
 * Claims `file` (the claim of `key`) for `holder` for `ttl` ms (see `SessionStore.claim`): a new claim is linked in
 * place; a held one is renewed, refused or taken over (expired, or `replaces`'s) under the claim's lock.
 */
export async function claimFile(
  directory: string,
  file: string,
  key: string,
  holder: string,
  ttl: number,
  replaces: string | undefined,
  now: () => number,
): Promise<SessionClaim | undefined> {
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
    `the claim of session ${JSON.stringify(key)} changed ${CLAIM_TRIES} times while it was being claimed: ` +
      'too many processes claim it at once',
  )
}
