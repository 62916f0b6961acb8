import { constants, type Stats } from 'node:fs'
import { open, stat, type FileHandle } from 'node:fs/promises'
import { CliError, firstLine, type CliErrorCode } from './errors.js'
import { formatLimit } from './format.js'

/** What the CLI reads from a path: a program, a session log, a tools module. */
export interface InputFile {
  /** `program`, `session log`, `tools module`: the start of every message. */
  readonly what: string
  /** The path as the user gave it (for messages). */
  readonly shown: string
  /** The absolute path. */
  readonly path: string
  /** Largest accepted size in bytes. */
  readonly maxBytes: number
  /** The code of the errors (all exit 2). */
  readonly code: CliErrorCode
  /** Added to the message when the path is a FIFO or a character device (`use - to read stdin`). */
  readonly streamHint?: string
}

/** `a directory`, `a FIFO`, … for a message saying why a path is not read. */
export function kindOf(info: Stats): string {
  if (info.isDirectory()) return 'a directory'
  if (info.isFIFO()) return 'a FIFO (named pipe)'
  if (info.isCharacterDevice()) return 'a character device'
  if (info.isBlockDevice()) return 'a block device'
  if (info.isSocket()) return 'a socket'
  return 'of an unknown kind'
}

function reasonOf(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code
  if (code === 'ENOENT') return 'no such file'
  if (code === 'ENOTDIR') return 'a folder on its path is a file'
  if (code === 'EACCES' || code === 'EPERM') return 'permission denied'
  if (code === 'ELOOP') return 'too many symbolic links'
  return firstLine(error)
}

const tooLarge = (file: Pick<InputFile, 'what' | 'shown' | 'maxBytes' | 'code'>, detail: string): CliError =>
  new CliError(
    file.code,
    `${file.what} ${file.shown} is too large: ${detail}, the limit is ${formatLimit(file.maxBytes)}`,
  )

function notRegular(file: InputFile, info: Stats): CliError {
  const hint =
    file.streamHint !== undefined && (info.isFIFO() || info.isCharacterDevice()) ? `; ${file.streamHint}` : ''
  return new CliError(file.code, `${file.what} ${file.shown} is ${kindOf(info)}, not a regular file${hint}`)
}

/**
 * Checks that `file` is a regular file of at most `maxBytes` without reading
 * it (for a module that `import` reads); returns its size. A missing file, a
 * directory, a FIFO, a device or a file too large is a `CliError`.
 */
export async function checkRegularFile(file: InputFile): Promise<number> {
  let info: Stats
  try {
    info = await stat(file.path)
  } catch (error) {
    throw new CliError(file.code, `cannot read ${file.what} ${file.shown}: ${reasonOf(error)}`, { cause: error })
  }
  if (!info.isFile()) throw notRegular(file, info)
  if (info.size > file.maxBytes) throw tooLarge(file, `${info.size} bytes`)
  return info.size
}

/**
 * Reads a regular file of at most `maxBytes`. The path is checked before it is
 * opened (a FIFO or a device is never opened), opened non-blocking and checked
 * again through the handle, and at most `maxBytes + 1` bytes are read, so a
 * file swapped or growing meanwhile cannot make the read hang or unbounded.
 */
export async function readRegularFile(file: InputFile): Promise<Buffer> {
  await checkRegularFile(file)
  let handle: FileHandle
  try {
    handle = await open(file.path, constants.O_RDONLY | (constants.O_NONBLOCK ?? 0))
  } catch (error) {
    throw new CliError(file.code, `cannot read ${file.what} ${file.shown}: ${reasonOf(error)}`, { cause: error })
  }
  try {
    const info = await handle.stat()
    if (!info.isFile()) throw notRegular(file, info)
    const chunks: Buffer[] = []
    let length = 0
    for (;;) {
      const want = Math.min(Math.max(info.size + 1 - length, 64 * 1024), file.maxBytes + 1 - length)
      const chunk = Buffer.allocUnsafe(want)
      const { bytesRead } = await handle.read(chunk, 0, want, length)
      if (bytesRead === 0) break
      chunks.push(chunk.subarray(0, bytesRead))
      length += bytesRead
      if (length > file.maxBytes) throw tooLarge(file, 'it grew past the limit while it was read')
    }
    return Buffer.concat(chunks, length)
  } catch (error) {
    if (error instanceof CliError) throw error
    throw new CliError(file.code, `cannot read ${file.what} ${file.shown}: ${reasonOf(error)}`, { cause: error })
  } finally {
    await handle.close().catch(() => undefined)
  }
}

/** Reads a stream to its end, at most `maxBytes` (stdin for `ptc run -`); more is a `CliError`. */
export async function readBoundedStream(
  stream: NodeJS.ReadableStream,
  file: Pick<InputFile, 'what' | 'shown' | 'maxBytes' | 'code'>,
): Promise<Buffer> {
  const chunks: Buffer[] = []
  let length = 0
  for await (const chunk of stream) {
    const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer)
    length += bytes.length
    if (length > file.maxBytes) throw tooLarge(file, `more than ${file.maxBytes} bytes`)
    chunks.push(bytes)
  }
  return Buffer.concat(chunks, length)
}
