import { execFileSync } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, test } from 'vitest'
import { CliError } from './errors.js'
import { checkRegularFile, readBoundedStream, readRegularFile, type InputFile } from './input-file.js'
import { Readable } from 'node:stream'

const dir = mkdtempSync(join(tmpdir(), 'ptc-input-file-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

const input = (path: string, maxBytes = 1024): InputFile => ({
  what: 'program',
  shown: path,
  path,
  maxBytes,
  code: 'INPUT',
})

async function failure(promise: Promise<unknown>): Promise<CliError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  )
  expect(error).toBeInstanceOf(CliError)
  return error as CliError
}

describe('readRegularFile', () => {
  test('reads a regular file up to its limit exactly', async () => {
    const path = join(dir, 'exact.js')
    writeFileSync(path, 'x'.repeat(1024))
    expect((await readRegularFile(input(path))).length).toBe(1024)
  })

  test('a file one byte over the limit is too large, before it is read', async () => {
    const path = join(dir, 'over.js')
    writeFileSync(path, 'x'.repeat(1025))
    expect((await failure(readRegularFile(input(path)))).message).toBe(
      `program ${path} is too large: 1025 bytes, the limit is 1 KiB (1024 bytes)`,
    )
  })

  test('a missing file, a directory and a device are named for what they are', async () => {
    expect((await failure(readRegularFile(input(join(dir, 'absent.js'))))).message).toMatch(
      /^cannot read program .*absent\.js: no such file$/,
    )
    mkdirSync(join(dir, 'folder'))
    expect((await failure(readRegularFile(input(join(dir, 'folder'))))).message).toMatch(
      / is a directory, not a regular file$/,
    )
    expect((await failure(checkRegularFile(input('/dev/null')))).message).toBe(
      'program /dev/null is a character device, not a regular file',
    )
  })

  test.runIf(process.platform !== 'win32')(
    'a FIFO is refused without being opened (opening it would wait for a writer)',
    async () => {
      const fifo = join(dir, 'fifo')
      execFileSync('mkfifo', [fifo])
      const error = await failure(readRegularFile({ ...input(fifo), streamHint: 'give - to read standard input' }))
      expect(error.message).toBe(
        `program ${fifo} is a FIFO (named pipe), not a regular file; give - to read standard input`,
      )
    },
  )

  test.runIf(existsSync('/proc/self/status'))(
    'a file that holds more than its size says is read to limit + 1 bytes only',
    async () => {
      // /proc files are regular files of size 0 that read as text: like a file that grows while it is read.
      expect((await readRegularFile(input('/proc/self/status', 1024 * 1024))).toString('utf8')).toMatch(/^Name:/)
      const error = await failure(readRegularFile(input('/proc/self/status', 16)))
      expect(error.message).toBe(
        'program /proc/self/status is too large: it grew past the limit while it was read, the limit is 16 bytes',
      )
    },
  )
})

describe('readBoundedStream', () => {
  test('reads a stream up to its limit and refuses one byte more', async () => {
    const file = { what: 'program', shown: '(stdin)', maxBytes: 8, code: 'INPUT' } as const
    expect((await readBoundedStream(Readable.from([Buffer.from('1234'), Buffer.from('5678')]), file)).toString()).toBe(
      '12345678',
    )
    const error = await failure(readBoundedStream(Readable.from([Buffer.from('12345678'), Buffer.from('9')]), file))
    expect(error.message).toBe('program (stdin) is too large: more than 8 bytes, the limit is 8 bytes')
  })

  test('stops reading an endless stream at the limit', async () => {
    let pulled = 0
    const endless = new Readable({
      read() {
        pulled++
        this.push(Buffer.alloc(1024))
      },
    })
    await failure(readBoundedStream(endless, { what: 'program', shown: '(stdin)', maxBytes: 64 * 1024, code: 'INPUT' }))
    expect(pulled).toBeLessThan(200)
  })
})
