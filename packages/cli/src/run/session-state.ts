import { randomBytes } from 'node:crypto'
import { chmod, link, mkdir, readFile, rm, stat, writeFile } from 'node:fs/promises'
import { join, resolve } from 'node:path'
import type { QuickJSSessionOptions } from '@ptc/sandbox-quickjs'
import { MAX_SESSION_KEY } from '@ptc/sandbox/backend'
import { createFileSessionStore, type SessionStore } from '@ptc/sandbox/session'
import { CliError, firstLine } from '../errors.js'

/**
 * Where `ptc run --session-state` keeps sessions unless `--session-dir` says otherwise (relative to the working
 * directory).
 */
export const DEFAULT_SESSION_DIR = '.ptc/sessions'
const SECRET_FILE = 'secret'
/** The longest secret file read: 64 hex digits and room for line ends and spaces. */
const SECRET_MAX_BYTES = 256

/**
 * The session options of `ptc run --session-state`: a file store in `directory` (mode 0700) and the
 * secret that authenticates its snapshots, made on first use (32 random bytes in `secret`, mode 0600)
 * and read after. Another user's secret file, or one others can read, is refused.
 */
export async function sessionStateOptions(key: string, directory: string, cwd: string): Promise<QuickJSSessionOptions> {
  if (key === '' || key.length > MAX_SESSION_KEY)
    throw new CliError('USAGE', `--session-state needs a key of 1 to ${MAX_SESSION_KEY} characters`)
  return sealedFolder(directory, cwd, 'session folder')
}

/** Where `ptc run --approve defer` keeps suspended programs unless `--durable-dir` says otherwise. */
export const DEFAULT_DURABLE_DIR = '.ptc/durable'

/**
 * The folder of suspended programs (`--approve defer`, `ptc resume`): a file store and its secret, as a
 * session folder has them.
 */
export async function durableFolder(directory: string, cwd: string): Promise<{ store: SessionStore; secret: Buffer }> {
  return sealedFolder(directory, cwd, 'folder of suspended programs')
}

/** A private folder (mode 0700) as a file store, with the secret that authenticates what is sealed in it. */
async function sealedFolder(
  directory: string,
  cwd: string,
  what: string,
): Promise<{ store: SessionStore; secret: Buffer }> {
  const dir = resolve(cwd, directory)
  try {
    await mkdir(dir, { recursive: true, mode: 0o700 })
    const info = await stat(dir)
    if (!info.isDirectory()) throw new Error(`${dir} is not a folder`)
    // Another user could put files where this process looks for its own (a pipe there would hang it).
    if (typeof process.getuid === 'function' && info.uid !== process.getuid())
      throw new CliError('SESSION', `the ${what} ${dir} belongs to another user: give a folder of your own`)
    if ((info.mode & 0o022) !== 0)
      throw new CliError(
        'SESSION',
        `the ${what} ${dir} can be written by others (mode ${(info.mode & 0o7777).toString(8)}): chmod 700 it, or ` +
          `give a folder of your own`,
      )
    return { store: createFileSessionStore({ directory: dir }), secret: await secretIn(dir) }
  } catch (error) {
    if (error instanceof CliError) throw error
    throw new CliError('SESSION', `cannot use the ${what} ${dir}: ${firstLine(error)}`, { cause: error })
  }
}

async function secretIn(dir: string): Promise<Buffer> {
  const path = join(dir, SECRET_FILE)
  // Made once, whole, never overwritten: written to a file of this process's own, then linked into place
  // (a link fails if the name exists). Another process starting at the same moment reads either no secret
  // or the whole one, never a file still being written; a process killed midway leaves only its draft.
  const draft = join(dir, `${SECRET_FILE}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`)
  try {
    const secret = randomBytes(32)
    await writeFile(draft, secret.toString('hex'), { flag: 'wx', mode: 0o600 })
    await chmod(draft, 0o600)
    await link(draft, path)
    return secret
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error
  } finally {
    await rm(draft, { force: true })
  }
  const info = await stat(path)
  if (!info.isFile())
    throw new CliError('SESSION', `the secret ${path} is not a file: delete it to start over (what it sealed is lost)`)
  if ((info.mode & 0o077) !== 0)
    throw new CliError(
      'SESSION',
      `the secret ${path} can be read by others (mode ${(info.mode & 0o777).toString(8)}): chmod 600 it`,
    )
  if (typeof process.getuid === 'function' && info.uid !== process.getuid())
    throw new CliError('SESSION', `the secret ${path} belongs to another user`)
  // 64 hex digits (and a line end, if someone wrote it by hand): a larger file is not read whole.
  const text = info.size > SECRET_MAX_BYTES ? '' : (await readFile(path, 'utf8')).trim()
  if (!/^[0-9a-f]{64}$/.test(text))
    throw new CliError(
      'SESSION',
      `the secret ${path} is not 64 hex digits: delete it to start over (what it sealed is lost)`,
    )
  return Buffer.from(text, 'hex')
}
