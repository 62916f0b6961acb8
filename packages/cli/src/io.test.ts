import { PassThrough } from 'node:stream'
import { describe, expect, test } from 'vitest'
import { escapingStream } from './io.js'

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
