import { constants as fs } from 'node:fs'
import { chmod, lstat, mkdir, open, unlink, type FileHandle } from 'node:fs/promises'
import { SessionStoreError } from './errors.js'

// The file system as the file store uses it: its directory, files opened without blocking, durable writes.

/**
 * What `read` makes of `file`, opened for reading (and closed after), with its inode, size and whether it is a
 * regular file; `undefined` when there is no such file. Opened without blocking: a named pipe put in place of a
 * file (which a plain open waits on until a writer comes, holding a thread of libuv's pool and the process
 * with it) opens at once, as what it is.
 */
export async function readOpen<T>(
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

/** Makes `directory` (mode 0700) unless it exists; what is in its place when it cannot be one. */
export async function makeDirectory(directory: string): Promise<void> {
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
    `the session store's directory ${directory} is not a directory (${what}): ` +
      'nothing can be saved there until it is one',
    { cause: error },
  )
}

/** Runs `operation`; an ENOTDIR it fails with is told as the directory's problem (`notADirectory`). */
export async function inDirectory<T>(directory: string, operation: () => Promise<T>): Promise<T> {
  try {
    return await operation()
  } catch (error) {
    if ((error as { code?: unknown } | null)?.code === 'ENOTDIR') throw await notADirectory(directory, error)
    throw error
  }
}

/** Writes all of `bytes` at the handle's position. */
export async function writeAll(handle: FileHandle, bytes: Uint8Array): Promise<void> {
  for (let at = 0; at < bytes.byteLength; ) {
    const { bytesWritten } = await handle.write(bytes, at, bytes.byteLength - at)
    at += bytesWritten
  }
}

/** Makes a rename durable. Best effort: some file systems refuse to fsync a directory. */
export async function syncDirectory(directory: string): Promise<void> {
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

/** Whether `error` says there is no such file. */
export function isMissing(error: unknown): boolean {
  return (error as { code?: unknown } | null)?.code === 'ENOENT'
}

/** Removes `file`; one that is not there is no error. */
export async function unlinkIfThere(file: string): Promise<void> {
  try {
    await unlink(file)
  } catch (error) {
    if (!isMissing(error)) throw error
  }
}
