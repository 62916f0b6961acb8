import { expect, test } from 'vitest'
import { spawnSourceWorker } from '../host/spawn.js'
import { MAILBOX_BYTES, ReplyMailbox, newMailboxMemory } from './mailbox.js'

test('every reply reaches the worker exactly once, through the mailbox or by message, under racing timeouts', async () => {
  const memory = newMailboxMemory()
  const control = new SharedArrayBuffer(4)
  const host = new ReplyMailbox(memory, new Int32Array(control))
  const N = 3000
  // A 50 us budget makes the worker's spins run out all the time, racing the host's claims.
  const worker = spawnSourceWorker(new URL('./fixtures/mailbox-worker.ts', import.meta.url), { memory, control, expected: N, budgetMs: 0.05 })
  await new Promise((resolve, reject) => {
    worker.once('message', resolve)
    worker.once('error', reject)
  })
  const report = new Promise<{ got: string[]; spins: number; hits: number }>((resolve) => worker.once('message', resolve))
  let offered = 0
  let messaged = 0
  for (let i = 0; i < N; i++) {
    const batch = `[[${i},1,"é${'x'.repeat(i % 50)}"]]`
    const count = i % 7
    if (i % 10 === 3) {
      // Both paths must run whatever the scheduler does (a starved worker may never be caught
      // spinning by a single try): these replies retry until the worker takes one by the mailbox
      // (a declined offer wrote nothing, so retrying cannot deliver twice)...
      while (!host.offer(1, batch, count)) await new Promise((resolve) => setImmediate(resolve))
      offered++
    } else if (i % 10 === 7) {
      // ...and these go by message only.
      worker.postMessage(`${batch}/${count}`)
      messaged++
    } else if (host.offer(1, batch, count)) offered++
    else {
      worker.postMessage(`${batch}/${count}`)
      messaged++
    }
    if (i % 4 === 0) await new Promise((resolve) => setImmediate(resolve))
  }
  const { got, hits } = await report
  await worker.terminate()
  expect(got).toHaveLength(N)
  expect(new Set(got).size).toBe(N)
  const expected = new Set(Array.from({ length: N }, (_, i) => `[[${i},1,"é${'x'.repeat(i % 50)}"]]/${i % 7}`))
  for (const entry of got) expect(expected.has(entry), entry).toBe(true)
  // Every reply the host put in the mailbox was taken from it, once; the rest came by message.
  expect(hits).toBe(offered)
  expect(offered + messaged).toBe(N)
  expect(offered).toBeGreaterThanOrEqual(N / 10)
  expect(messaged).toBeGreaterThanOrEqual(N / 10)
}, 60_000)

test('offer declines when nobody spins for that run, or when the batch may not fit', () => {
  const memory = newMailboxMemory()
  const box = new ReplyMailbox(memory, new Int32Array(new SharedArrayBuffer(4)))
  expect(box.offer(1, '[]', 0)).toBe(false)
  // A worker spinning for run 2 does not take run 1's reply.
  new Int32Array(memory.words)[0] = 2
  expect(box.offer(1, '[]', 0)).toBe(false)
  expect(box.offer(2, 'x'.repeat(Math.floor(MAILBOX_BYTES / 3) + 1), 1)).toBe(false)
  expect(box.offer(2, '[[1,1,null]]', 1)).toBe(true)
  expect(box.wait(2, 1)).toEqual({ batch: '[[1,1,null]]', count: 1 })
})

test('a spinning worker gives up at once when the run is stopped', () => {
  const control = new Int32Array(new SharedArrayBuffer(4))
  const box = new ReplyMailbox(newMailboxMemory(), control)
  control[0] = 1
  const t = performance.now()
  expect(box.wait(1, 10_000)).toBeUndefined()
  expect(performance.now() - t).toBeLessThan(1000)
})
