import { randomBytes } from 'node:crypto'
import { open, rename, stat, unlink, type FileHandle } from 'node:fs/promises'
import { join } from 'node:path'
import { SessionStoreError } from './errors.js'
import { isMissing, readOpen, syncDirectory, writeAll } from './file-system.js'

const MAGIC = Buffer.from('PTSF', 'latin1')
const VERSION = 1
/*
 * A file: magic "PTSF", version byte, 3 zero bytes, expiry (epoch ms, 0 = none) and payload length as u64 BE,
 * payload.
 */
const HEADER_BYTES = 24

interface Entry {
  expiresAt: number
  payload: Uint8Array
  ino: number
}

/**
 * The entry in `file`, `undefined` when there is none; with `headerOnly`, an empty payload. `named`: the entry's own
 * file, when `file` is where a take moved it.
 */
export async function readEntry(
  file: string,
  key: string,
  headerOnly: boolean,
  named = file,
): Promise<Entry | undefined> {
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
export const MAX_PAYLOAD_BYTES = 2 ** 31 - 1

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
export async function moveAside(from: string, file: string, error: unknown): Promise<never> {
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
 * Deletes an expired entry unless a `set` replaced it since it was read (same inode), as far as a file system lets
 * one tell.
 */
export async function removeIfUnchanged(file: string, ino: number): Promise<void> {
  const current = await stat(file).catch(() => undefined)
  if (current?.ino !== ino) return
  try {
    await unlink(file)
  } catch (error) {
    if (!isMissing(error)) throw error
  }
}

/**
 * Writes an entry of `bytes` expiring at `expiresAt` (epoch ms, 0 = never) over `file`: to a temporary file beside
 * it, fsynced, then renamed in place, so a reader or a crash sees the old bytes or the new ones, never a mix.
 */
export async function writeEntry(directory: string, file: string, bytes: Uint8Array, expiresAt: number): Promise<void> {
  const header = Buffer.alloc(HEADER_BYTES)
  MAGIC.copy(header, 0)
  header.writeUInt8(VERSION, 4)
  header.writeBigUInt64BE(BigInt(expiresAt), 8)
  header.writeBigUInt64BE(BigInt(bytes.byteLength), 16)
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
}
