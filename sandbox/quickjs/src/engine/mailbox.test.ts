import type { Worker } from 'node:worker_threads'
import { expect, test } from 'vitest'
import { spawnSourceWorker } from '@ptc/sandbox/backend'
import { MAILBOX_BYTES, ReplyMailbox, SpinPlaces } from './mailbox.js'

const FIXTURE = new URL('./fixtures/mailbox-worker.ts', import.meta.url)
const nextMessage = <T>(worker: Worker): Promise<T> =>
  new Promise((resolve, reject) => {
    worker.once('message', resolve)
    worker.once('error', reject)
  })
const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve))

// A 50 us spin runs out all the time, racing the host's claims between spinning and sleeping.
test.each([
  ['sleeps', 0],
  ['spins 50 us, then sleeps', 0.05],
])(
  'every reply reaches a worker that %s exactly once, through the mailbox or by message',
  async (_, spinMs) => {
    const memory = new SpinPlaces(1).mailbox()
    const control = new SharedArrayBuffer(4)
    const host = new ReplyMailbox(memory, new Int32Array(control))
    const N = 3000
    const worker = spawnSourceWorker(FIXTURE, { memory, control, expected: N, mode: 'replies', spinMs })
    await nextMessage(worker)
    const report = nextMessage<{ got: string[]; hits: number }>(worker)
    let offered = 0
    let messaged = 0
    const byMessage = (text: string): void => {
      host.posting()
      worker.postMessage(text)
      messaged++
    }
    const expected = new Set<string>()
    for (let i = 0; i < N; i++) {
      const count = i % 7
      // Some batches do not fit (multi-byte text over the mailbox's size), one in a hundred fits only when measured.
      const body =
        i % 10 === 7 ? 'é'.repeat(MAILBOX_BYTES / 2 + 1) : i % 100 === 3 ? 'é'.repeat(30_000) : `é${'x'.repeat(i % 50)}`
      const batch = `[[${i},1,"${body}"]]`
      expected.add(`${batch}/${count}`)
      if (i % 10 === 7) {
        expect(host.offer(1, batch, count)).toBe(false)
        byMessage(`${batch}/${count}`)
      } else if (i % 10 === 3) {
        // Retried until the worker takes it from the mailbox (a declined offer wrote nothing).
        while (!host.offer(1, batch, count)) await turn()
        offered++
      } else if (host.offer(1, batch, count)) offered++
      else byMessage(`${batch}/${count}`)
      if (i % 4 === 0) await turn()
    }
    const { got, hits } = await report
    await worker.terminate()
    expect(got).toHaveLength(N)
    expect(new Set(got)).toEqual(expected)
    // Every reply the host put in the mailbox was taken from it, once; the rest came by message.
    expect(hits).toBe(offered)
    expect(offered + messaged).toBe(N)
    expect(offered).toBeGreaterThanOrEqual(N / 10)
    expect(messaged).toBeGreaterThanOrEqual(N / 10)
  },
  60_000,
)

test('a worker sleeping in the mailbox wakes when its run is stopped, with no reply', async () => {
  const memory = new SpinPlaces(1).mailbox()
  const control = new Int32Array(new SharedArrayBuffer(4))
  const host = new ReplyMailbox(memory, control)
  const worker = spawnSourceWorker(FIXTURE, { memory, control: control.buffer, expected: 1, mode: 'stop', spinMs: 0 })
  await nextMessage(worker)
  const released = nextMessage<{ released: unknown }>(worker)
  // Wait until it sleeps (it has said it is waiting for run 1), then stop the run.
  while (Atomics.load(new Int32Array(memory.words), 0) !== 1) await turn()
  Atomics.store(control, 0, 1)
  host.wake()
  expect(await released).toEqual({ released: 'undefined' })
  // It gave up its wait: a later offer for that run is declined.
  expect(host.offer(1, '[]', 0)).toBe(false)
  await worker.terminate()
}, 60_000)

test('offer declines when nobody waits for that run, or when the batch does not fit', () => {
  const memory = new SpinPlaces(0).mailbox()
  const box = new ReplyMailbox(memory, new Int32Array(new SharedArrayBuffer(4)))
  expect(box.offer(1, '[]', 0)).toBe(false)
  // A worker waiting for run 2 does not take run 1's reply.
  new Int32Array(memory.words)[0] = 2
  expect(box.offer(1, '[]', 0)).toBe(false)
  expect(box.offer(2, 'é'.repeat(MAILBOX_BYTES / 2 + 1), 1)).toBe(false)
  expect(box.offer(2, '[[1,1,null]]', 1)).toBe(true)
  expect(box.wait(2)).toEqual({ batch: '[[1,1,null]]', count: 1, slept: true })
})

test('a worker does not sleep while a reply waits in its port, or after its run was stopped', () => {
  const control = new Int32Array(new SharedArrayBuffer(4))
  const box = new ReplyMailbox(new SpinPlaces(0).mailbox(), control)
  box.posting()
  expect(box.wait(1)).toBeUndefined()
  box.received()
  control[0] = 1
  expect(box.wait(1)).toBeUndefined()
})

test('a worker spins only in a free place, gives it back, and the pool frees the place of a worker terminated while spinning', async () => {
  const places = new SpinPlaces(1)
  const first = places.mailbox()
  const second = places.mailbox()
  const words = new Int32Array(places.memory)
  const control = new Int32Array(new SharedArrayBuffer(4))
  const host = new ReplyMailbox(first, control)
  // A reply already there: taken while spinning, and the place is free again.
  const box = new ReplyMailbox(first, control)
  Atomics.store(new Int32Array(first.words), 0, 7)
  expect(host.offer(7, '[1]', 1)).toBe(true)
  expect(box.wait(7, 1)).toEqual({ batch: '[1]', count: 1, slept: false })
  expect([...words]).toEqual([0])

  // A worker that spins for a minute holds the only place; a second worker then sleeps without spinning.
  const worker = spawnSourceWorker(FIXTURE, {
    memory: first,
    control: control.buffer,
    expected: 1,
    mode: 'stop',
    spinMs: 60_000,
  })
  await nextMessage(worker)
  while (Atomics.load(words, 0) !== first.spinnerId) await turn()
  // (A reply waits in its port, so it returns at once, spinning or not.)
  const other = new ReplyMailbox(second, control)
  new ReplyMailbox(second, control).posting()
  expect(other.wait(1, 60_000)).toBeUndefined()
  expect(Atomics.load(words, 0)).toBe(first.spinnerId)
  await worker.terminate()
  // Terminated mid-spin, it never freed its place: the pool does.
  expect(Atomics.load(words, 0)).toBe(first.spinnerId)
  places.release(second)
  expect(Atomics.load(words, 0)).toBe(first.spinnerId)
  places.release(first)
  expect(Atomics.load(words, 0)).toBe(0)
}, 60_000)
