import { constants, type Stats } from 'node:fs'
import { open, stat, type FileHandle } from 'node:fs/promises'
import { dirname, resolve } from 'node:path'
import { describeThrown } from '../errors.js'
import type { Session, SessionEvent } from '../types/scope.js'
import { encodeEvent } from './event.js'
import { SessionError } from '../errors.js'

/** Options of `JsonlSession.open`. */
export interface JsonlSessionOptions {
  /**
   * `false` (default): each event is handed to the OS (one `write`) before its
   * `append` resolves, which survives a process crash but not a power loss.
   * `true`: also `fdatasync` per event before `append` resolves.
   */
  readonly fsync?: boolean
}

/** What `JsonlSession.open` cut off the end of an existing file: an unterminated line left by a crash. */
export interface JsonlRepair {
  /** Byte length of the file after the repair (where the partial line started). */
  readonly offset: number
  /** How many bytes of the partial line were removed. */
  readonly truncatedBytes: number
}

/**
 * A durable, append-only JSON Lines session file: one event per line, each line
 * written with a single `write` (looping only on a short write) through a
 * serialized queue, so concurrent `append` calls land in call order.
 *
 * Crash safety: `\n` is the commit marker. A crash, even mid-write, leaves at
 * most one unterminated last line, i.e. it loses at most the event whose
 * `append` had not resolved. `open` repairs such a file by truncating the
 * unterminated tail (reported as `repaired`), so the next event starts on a
 * fresh line and no reader ever sees a corrupt line in the middle.
 *
 * One writer per file: two sessions (or processes) appending to the same file
 * are not coordinated. If a write fails, the session refuses every later
 * append (`SESSION_WRITE_FAILED`); reopen it to repair and continue.
 */
export class JsonlSession implements Session, AsyncDisposable {
  /** Absolute path of the session file. */
  readonly path: string
  /** Whether every append is followed by `fdatasync`. */
  readonly fsync: boolean
  /** The partial last line removed at open, or `undefined` if the file ended cleanly. */
  readonly repaired: JsonlRepair | undefined
  readonly #handle: FileHandle
  #queue: Promise<void> = Promise.resolve()
  #closing: Promise<void> | undefined
  #failure: { readonly error: unknown } | undefined

  private constructor(path: string, handle: FileHandle, fsync: boolean, repaired: JsonlRepair | undefined) {
    this.path = path
    this.#handle = handle
    this.fsync = fsync
    this.repaired = repaired
  }

  /**
   * Opens (creating if needed) the session file at `path` for appending and
   * repairs an unterminated last line. A missing folder is a
   * `SessionError('SESSION_OPEN_FAILED')` naming it, and no file is created.
   */
  static async open(path: string, options: JsonlSessionOptions = {}): Promise<JsonlSession> {
    const absolute = resolve(path)
    let handle: FileHandle
    try {
      // Non-blocking, so a FIFO or device at the path cannot hang the open; it is refused just below.
      handle = await open(
        absolute,
        constants.O_RDWR | constants.O_APPEND | constants.O_CREAT | constants.O_NONBLOCK,
        0o600,
      )
    } catch (error) {
      throw await openError(absolute, error)
    }
    const kind = await handle.stat().then(fileKind, () => 'unreadable file')
    if (kind !== undefined) {
      await handle.close().catch(() => undefined)
      throw new SessionError(
        'SESSION_OPEN_FAILED',
        `cannot open session file ${absolute}: it is a ${kind}, not a regular file (writes to it could block forever)`,
      )
    }
    try {
      const repaired = await repairTail(handle)
      return new JsonlSession(absolute, handle, options.fsync === true, repaired)
    } catch (error) {
      await handle.close().catch(() => undefined)
      const message = `cannot repair session file ${absolute}: ${describeThrown(error)}`
      throw new SessionError('SESSION_OPEN_FAILED', message, { cause: error })
    }
  }

  /** `true` once `close()` (or disposal) has begun; `append` then rejects. */
  get closed(): boolean {
    return this.#closing !== undefined
  }

  /**
   * Snapshots and encodes `event` now (later mutation cannot change it), then
   * writes its line after every earlier append. Resolves once the line is
   * handed to the OS (and synced, with `fsync`). Rejects without writing
   * anything for a non-JSON event (`NotJsonError`), a malformed one
   * (`SessionError('INVALID_EVENT')`) or a closed session (`SESSION_CLOSED`).
   */
  append(event: SessionEvent): Promise<void> {
    if (this.#closing !== undefined) {
      return Promise.reject(new SessionError('SESSION_CLOSED', `session file ${this.path} is closed`))
    }
    let line: Buffer
    try {
      line = encodeEvent(event).line
    } catch (error) {
      return Promise.reject(error)
    }
    const written = this.#queue.then(() => this.#write(line))
    this.#queue = written.catch(() => undefined)
    return written
  }

  /** Waits for every pending append, syncs the file to disk and closes it. Idempotent. */
  close(): Promise<void> {
    this.#closing ??= this.#close()
    return this.#closing
  }

  /** Same as `close()`, for `await using`. */
  [Symbol.asyncDispose](): Promise<void> {
    return this.close()
  }

  async #write(line: Buffer): Promise<void> {
    if (this.#failure !== undefined) {
      const message = `session file ${this.path} is unusable after a failed write; reopen it`
      throw new SessionError('SESSION_WRITE_FAILED', message, { cause: this.#failure.error })
    }
    try {
      let offset = 0
      while (offset < line.length) {
        const { bytesWritten } = await this.#handle.write(line, offset, line.length - offset)
        if (bytesWritten <= 0) throw new Error('the OS accepted no bytes')
        offset += bytesWritten
      }
      if (this.fsync) await this.#handle.datasync()
    } catch (error) {
      this.#failure = { error }
      const message = `cannot append to session file ${this.path}: ${describeThrown(error)}`
      throw new SessionError('SESSION_WRITE_FAILED', message, { cause: error })
    }
  }

  async #close(): Promise<void> {
    await this.#queue
    try {
      if (this.#failure === undefined) await this.#handle.datasync().catch(ignoreUnsupportedSync)
    } finally {
      await this.#handle.close()
    }
  }
}

/**
 * What a path is when a session cannot use it: a FIFO or a socket (writes would block once nobody
 * reads), a block device. Undefined for a regular file or a character device (`/dev/null` discards).
 */
function fileKind(info: Stats): string | undefined {
  if (info.isFile() || info.isCharacterDevice()) return undefined
  if (info.isFIFO()) return 'FIFO'
  if (info.isSocket()) return 'socket'
  if (info.isBlockDevice()) return 'block device'
  return 'special file'
}

/** Truncates an unterminated last line; scans backwards in chunks, so the cost is the tail, not the file. */
async function repairTail(handle: FileHandle): Promise<JsonlRepair | undefined> {
  const info = await handle.stat()
  if (!info.isFile() || info.size === 0) return undefined
  const chunk = Buffer.allocUnsafe(Math.min(info.size, 64 * 1024))
  let keep = 0
  for (let end = info.size; end > 0; ) {
    const start = Math.max(0, end - chunk.length)
    const { bytesRead } = await handle.read(chunk, 0, end - start, start)
    const newline = chunk.subarray(0, bytesRead).lastIndexOf(0x0a)
    if (newline !== -1) {
      keep = start + newline + 1
      break
    }
    end = start
  }
  if (keep === info.size) return undefined
  await handle.truncate(keep)
  return { offset: keep, truncatedBytes: info.size - keep }
}

async function openError(path: string, error: unknown): Promise<SessionError> {
  const folder = dirname(path)
  const code = (error as { code?: unknown } | null)?.code
  let reason = describeThrown(error)
  if (code === 'ENOENT' || code === 'ENOTDIR') {
    const folderOk = await stat(folder).then(
      (info) => info.isDirectory(),
      () => false,
    )
    if (!folderOk) reason = `folder ${folder} does not exist`
  }
  return new SessionError('SESSION_OPEN_FAILED', `cannot open session file ${path}: ${reason}`, { cause: error })
}

/** `fdatasync` is not supported on some files (e.g. character devices); closing still succeeds. */
function ignoreUnsupportedSync(error: unknown): void {
  const code = (error as { code?: unknown } | null)?.code
  if (code !== 'EINVAL' && code !== 'ENOTSUP' && code !== 'EROFS') throw error
}
