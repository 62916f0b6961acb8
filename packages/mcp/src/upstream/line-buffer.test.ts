import { PassThrough } from 'node:stream'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js'
import { ReadBuffer } from '@modelcontextprotocol/sdk/shared/stdio.js'
import { describe, expect, test } from 'vitest'
import { LineBuffer, useLineBuffer } from './line-buffer.js'

const message = (id: number, text = 'x'): string =>
  JSON.stringify({ jsonrpc: '2.0', id, method: 'ping', params: { text } })

/** Every message `buffer` yields when `bytes` arrive cut at `cuts`. */
function feed(buffer: LineBuffer | ReadBuffer, bytes: Buffer, cuts: number[]): unknown[] {
  const out: unknown[] = []
  let from = 0
  for (const cut of [...cuts, bytes.length]) {
    buffer.append(bytes.subarray(from, cut))
    from = cut
    for (let m = buffer.readMessage(); m !== null; m = buffer.readMessage()) out.push(m)
  }
  return out
}

describe('LineBuffer', () => {
  const text = `${message(1, 'héllo €')}\n${message(2)}\r\n${message(3, 'x'.repeat(3000))}\n`
  const bytes = Buffer.from(text, 'utf8')
  const expected = feed(new ReadBuffer(), bytes, [])

  test('yields what the SDK ReadBuffer yields, wherever the chunks are cut (inside characters, line ends, CRLF)', () => {
    expect(expected).toHaveLength(3)
    for (let cut = 1; cut < bytes.length; cut += 7) {
      expect(feed(new LineBuffer(1 << 20), bytes, [cut])).toEqual(expected)
      expect(feed(new LineBuffer(1 << 20), bytes, [Math.floor(cut / 2), cut])).toEqual(expected)
    }
    // One byte at a time.
    expect(
      feed(
        new LineBuffer(1 << 20),
        bytes,
        Array.from({ length: bytes.length - 1 }, (_, i) => i + 1),
      ),
    ).toEqual(expected)
  })

  test('past maxBytes held it throws the SDK message and empties itself; the next message reads', () => {
    const buffer = new LineBuffer(100)
    buffer.append(Buffer.from('x'.repeat(60)))
    expect(() => buffer.append(Buffer.from('y'.repeat(41)))).toThrow('ReadBuffer exceeded maximum size of 100 bytes')
    buffer.append(Buffer.from(`${message(7)}\n`))
    expect(buffer.readMessage()).toMatchObject({ id: 7 })
    expect(buffer.readMessage()).toBeNull()
  })

  test('a line that is not a JSON-RPC message throws at its read; the next line still reads', () => {
    const buffer = new LineBuffer(1 << 20)
    buffer.append(Buffer.from(`not json\n{"jsonrpc":"2.0"}\n${message(4)}\n`))
    expect(() => buffer.readMessage()).toThrow()
    expect(() => buffer.readMessage()).toThrow()
    expect(buffer.readMessage()).toMatchObject({ id: 4 })
  })

  test('a long message in many chunks, then more: each read whole', () => {
    const long = Buffer.from(`${message(5, 'z'.repeat(2_000_000))}\n${message(6)}\n`)
    const cuts = Array.from({ length: 300 }, (_, i) => Math.floor(((i + 1) * long.length) / 301))
    const out = feed(new LineBuffer(4 << 20), long, cuts) as { id: number; params: { text: string } }[]
    expect(out.map((m) => [m.id, m.params.text.length])).toEqual([
      [5, 2_000_000],
      [6, 1],
    ])
  })
})

describe('useLineBuffer', () => {
  test("replaces the SDK stdio transports' own ReadBuffer (the private field it relies on still exists)", () => {
    const client = new StdioClientTransport({ command: 'true' })
    const server = new StdioServerTransport(new PassThrough(), new PassThrough())
    for (const transport of [client, server]) {
      expect((transport as unknown as { _readBuffer: unknown })._readBuffer).toBeInstanceOf(ReadBuffer)
      useLineBuffer(transport, 1024)
      expect((transport as unknown as { _readBuffer: unknown })._readBuffer).toBeInstanceOf(LineBuffer)
    }
  })
})
