import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { PassThrough, Writable } from 'node:stream'
import { fileURLToPath } from 'node:url'
import { describe, expect, test } from 'vitest'
import { escapingStream, writeMessage } from './io.js'

describe('escapingStream', () => {
  test('passes text on with control characters escaped, line breaks kept, UTF-8 split across chunks decoded whole', async () => {
    const target = new PassThrough()
    const out: string[] = []
    target.on('data', (chunk: Buffer) => out.push(chunk.toString('utf8')))
    const stream = escapingStream(target)
    const bytes = Buffer.from('upstream \x1b[31mred\u202e é€\nnext line\t.\n', 'utf8')
    const euro = bytes.indexOf(Buffer.from('€')) + 1 // split inside the 3-byte sequence of €
    stream.write(bytes.subarray(0, euro))
    stream.write(bytes.subarray(euro))
    stream.write('ptc serve: \u009bforged\n')
    await new Promise<void>((resolve) => stream.end(resolve))
    expect(out.join('')).toBe('upstream \\x1b[31mred\\u202e é€\nnext line\t.\nptc serve: \\x9bforged\n')
  })
})

describe('escapingStream over a target that does not take its text', () => {
  test('a write is done only when the target took it, so what the target does not take waits in this stream', async () => {
    const taken: (() => void)[] = []
    const target = new Writable({ write: (_chunk, _encoding, callback) => void taken.push(() => callback()) })
    const stream = escapingStream(target)
    const done: number[] = []
    for (let i = 0; i < 4; i++) stream.write('x'.repeat(1000), () => done.push(i))
    await new Promise((resolve) => setImmediate(resolve))
    expect(done).toEqual([])
    expect(stream.writableLength).toBe(4000)
    while (done.length < 4) {
      taken.shift()?.()
      await new Promise((resolve) => setImmediate(resolve))
    }
    expect(done).toEqual([0, 1, 2, 3])
    expect(stream.writableLength).toBe(0)
  })

  test('a target that failed fails this stream (an error event, then destroyed), instead of the writes vanishing', async () => {
    const target = new PassThrough()
    target.on('error', () => undefined)
    target.destroy(new Error('write EPIPE'))
    const stream = escapingStream(target)
    const failed = new Promise<Error>((resolve) => stream.once('error', resolve))
    stream.write('lost\n')
    expect((await failed).message).toMatch(/destroyed|EPIPE/)
    expect(stream.destroyed).toBe(true)
  })
})

describe('messages', () => {
  test('writeMessage writes one prefix and one line, a line break in the text escaped', () => {
    const stream = new PassThrough()
    writeMessage(stream, 'cannot read x\nptc: forged \x1b[2J')
    expect(String(stream.read())).toBe('ptc: cannot read x\\nptc: forged \\x1b[2J\n')
  })

  test('no message text in the sources has a prefix of its own: writeMessage and main add the one prefix', () => {
    const src = fileURLToPath(new URL('.', import.meta.url))
    const files = readdirSync(src, { recursive: true, encoding: 'utf8' }).filter(
      (f) => f.endsWith('.ts') && !f.endsWith('.test.ts'),
    )
    expect(files.length).toBeGreaterThan(20)
    const prefixed = /(?:new CliError\(\s*'[A-Z_]+',\s*|writeMessage\([^,]+,\s*|writeLine\(io\.stderr,\s*)[`'"]ptc[ :]/g
    const found = files.flatMap((file) =>
      [...readFileSync(join(src, file), 'utf8').matchAll(prefixed)].map((m) => `${file}: ${m[0]}`),
    )
    expect(found).toEqual([])
  })
})
