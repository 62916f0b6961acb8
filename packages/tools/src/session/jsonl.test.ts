import { execFileSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import { appendFile, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises'
import os from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, test } from 'vitest'
import type { SessionEvent } from '../types/scope.js'
import { JsonlSession } from './jsonl.js'
import { parseJsonl, readJsonlSession } from './read.js'

let dir = ''
beforeEach(async () => {
  dir = await mkdtemp(join(os.tmpdir(), 'ptc-jsonl-'))
})
afterEach(async () => {
  await rm(dir, { recursive: true, force: true })
})

async function lines(file: string): Promise<string[]> {
  const text = await readFile(file, 'utf8')
  expect(text === '' || text.endsWith('\n')).toBe(true)
  return text.split('\n').slice(0, -1)
}

describe('JsonlSession', () => {
  test('writes one JSON line per event, read back exactly', async () => {
    const file = join(dir, 's.jsonl')
    const session = await JsonlSession.open(file)
    expect(session.path).toBe(file)
    expect(session.repaired).toBeUndefined()
    const event = { type: 'tool/call', time: 1, turn: 0, text: 'multi\nline', nested: { a: [1, null] } }
    await session.append(event)
    await session.close()
    expect(await lines(file)).toHaveLength(1)
    expect((await readJsonlSession(file)).events).toEqual([event])
  })

  test('a new session file is readable by its owner only, since logs hold tool arguments', async () => {
    const file = join(dir, 'private.jsonl')
    const session = await JsonlSession.open(file)
    await session.close()
    expect((await stat(file)).mode & 0o777).toBe(0o600)
  })

  test('concurrent appends land in call order', async () => {
    const file = join(dir, 's.jsonl')
    const session = await JsonlSession.open(file)
    const appends: Promise<void>[] = []
    for (let i = 0; i < 500; i++)
      appends.push(session.append({ type: 'n', time: i, pad: 'x'.repeat((i * 7919) % 20_000) }))
    await Promise.all(appends)
    await session.close()
    const { events } = await readJsonlSession(file)
    expect(events.map((e) => e.time)).toEqual(Array.from({ length: 500 }, (_, i) => i))
  })

  test('the event is snapshotted when append is called', async () => {
    const file = join(dir, 's.jsonl')
    const session = await JsonlSession.open(file)
    const event: SessionEvent = { type: 'a', time: 1, data: { v: 'before' } }
    const appended = session.append(event)
    ;(event.data as { v: string }).v = 'after'
    await appended
    await session.close()
    expect((await readJsonlSession(file)).events[0]?.data).toEqual({ v: 'before' })
  })

  test('reopening continues the file', async () => {
    const file = join(dir, 's.jsonl')
    const first = await JsonlSession.open(file)
    await first.append({ type: 'a', time: 1 })
    await first.close()
    const second = await JsonlSession.open(file)
    expect(second.repaired).toBeUndefined()
    await second.append({ type: 'b', time: 2 })
    await second.close()
    expect((await readJsonlSession(file)).events.map((e) => e.type)).toEqual(['a', 'b'])
  })

  test.each([
    ['a partial JSON tail', '{"type":"a","time":1}\n', '{"type":"b","ti'],
    ['a tail that parses but has no newline', '{"type":"a","time":1}\n', '{"type":"b","time":2}'],
    ['a file that is only a partial line', '', '{"type":"b"'],
    [
      'a partial tail longer than the scan chunk',
      '{"type":"a","time":1}\n',
      `{"type":"b","time":2,"x":"${'y'.repeat(200_000)}`,
    ],
  ])('reopening repairs %s and the next event starts on a fresh line', async (_name, good, partial) => {
    const file = join(dir, 's.jsonl')
    await writeFile(file, good + partial)
    expect(parseJsonl(await readFile(file)).partialTail).toEqual({
      offset: Buffer.byteLength(good),
      bytes: Buffer.byteLength(partial),
    })
    const session = await JsonlSession.open(file)
    expect(session.repaired).toEqual({ offset: Buffer.byteLength(good), truncatedBytes: Buffer.byteLength(partial) })
    await session.append({ type: 'c', time: 3 })
    await session.close()
    const read = await readJsonlSession(file)
    expect(read.partialTail).toBeUndefined()
    expect(read.invalidLines).toEqual([])
    expect(read.events.map((e) => e.type)).toEqual([...(good === '' ? [] : ['a']), 'c'])
  })

  test('an event that cannot be serialized rejects and writes nothing', async () => {
    const file = join(dir, 's.jsonl')
    const session = await JsonlSession.open(file)
    await session.append({ type: 'a', time: 1 })
    const cyclic: SessionEvent = { type: 'x', time: 2 }
    cyclic.self = [cyclic]
    await expect(session.append(cyclic)).rejects.toMatchObject({
      code: 'NOT_JSON',
      message: expect.stringContaining('/self/0'),
    })
    await expect(session.append({ type: 'x', time: 2, n: 10n })).rejects.toMatchObject({ code: 'NOT_JSON' })
    await expect(session.append({ type: 'x', time: 2, f: () => 0 })).rejects.toMatchObject({ code: 'NOT_JSON' })
    await expect(session.append(undefined as unknown as SessionEvent)).rejects.toMatchObject({ code: 'NOT_JSON' })
    await expect(session.append({ type: 'x' } as SessionEvent)).rejects.toMatchObject({ code: 'INVALID_EVENT' })
    await session.append({ type: 'b', time: 3 })
    await session.close()
    expect(await lines(file)).toEqual(['{"type":"a","time":1}', '{"type":"b","time":3}'])
  })

  test('a missing folder is a clear error at open and creates nothing', async () => {
    const folder = join(dir, 'missing', 'deeper')
    const error: unknown = await JsonlSession.open(join(folder, 's.jsonl')).catch((e: unknown) => e)
    expect(error).toMatchObject({ name: 'SessionError', code: 'SESSION_OPEN_FAILED', cause: { code: 'ENOENT' } })
    expect((error as Error).message).toContain(`folder ${folder} does not exist`)
    expect(existsSync(join(dir, 'missing'))).toBe(false)
  })

  test('a path that is a folder is an open error', async () => {
    await expect(JsonlSession.open(dir)).rejects.toMatchObject({
      code: 'SESSION_OPEN_FAILED',
      cause: { code: 'EISDIR' },
    })
  })

  test('a FIFO is refused at open instead of blocking the session forever; /dev/null discards', async () => {
    const fifo = join(dir, 'fifo.jsonl')
    execFileSync('mkfifo', [fifo])
    await expect(JsonlSession.open(fifo)).rejects.toMatchObject({
      code: 'SESSION_OPEN_FAILED',
      message: expect.stringContaining('is a FIFO, not a regular file'),
    })
    const discard = await JsonlSession.open('/dev/null')
    await discard.append({ type: 'a', time: 1 })
    await discard.close()
  })

  test('close flushes pending appends, is idempotent, and later appends reject', async () => {
    const file = join(dir, 's.jsonl')
    const session = await JsonlSession.open(file, { fsync: true })
    const pending = [1, 2, 3].map((time) => session.append({ type: 'p', time }))
    const closing = session.close()
    expect(session.closed).toBe(true)
    expect(session.close()).toBe(closing)
    await Promise.all([...pending, closing])
    await expect(session.append({ type: 'late', time: 4 })).rejects.toMatchObject({ code: 'SESSION_CLOSED' })
    expect(await lines(file)).toHaveLength(3)
  })

  test('asyncDispose closes the session', async () => {
    const file = join(dir, 's.jsonl')
    const session = await JsonlSession.open(file)
    await session.append({ type: 'a', time: 1 })
    await session[Symbol.asyncDispose]()
    expect(session.closed).toBe(true)
    await expect(session.append({ type: 'b', time: 2 })).rejects.toMatchObject({ code: 'SESSION_CLOSED' })
  })

  test.skipIf(!existsSync('/dev/full'))('after a failed write every later append rejects', async () => {
    const session = await JsonlSession.open('/dev/full')
    const first = session.append({ type: 'a', time: 1 })
    const second = session.append({ type: 'b', time: 2 })
    await expect(first).rejects.toMatchObject({ code: 'SESSION_WRITE_FAILED', cause: { code: 'ENOSPC' } })
    await expect(second).rejects.toMatchObject({ code: 'SESSION_WRITE_FAILED', cause: { code: 'ENOSPC' } })
    await session.close()
  })
})

describe('readJsonlSession', () => {
  test('reports a partial tail and invalid lines, skips blank lines, never modifies the file', async () => {
    const file = join(dir, 's.jsonl')
    const text = '{"type":"a","time":1}\n\nnot json\n[1]\n{"type":"b","time":2}\n{"type":"c"'
    await writeFile(file, text)
    const read = await readJsonlSession(file)
    expect(read.events.map((e) => e.type)).toEqual(['a', 'b'])
    expect(read.partialTail).toEqual({ offset: text.lastIndexOf('\n') + 1, bytes: 11 })
    expect(read.invalidLines.map((l) => [l.line, l.offset])).toEqual([
      [3, 23],
      [4, 32],
    ])
    expect(read.invalidLines[1]?.message).toContain('`type` and `time`')
    expect(await readFile(file, 'utf8')).toBe(text)
  })

  test('a missing file is a SESSION_OPEN_FAILED error', async () => {
    await appendFile(join(dir, 'other'), '')
    await expect(readJsonlSession(join(dir, 'nope.jsonl'))).rejects.toMatchObject({
      code: 'SESSION_OPEN_FAILED',
      cause: { code: 'ENOENT' },
    })
  })
})
