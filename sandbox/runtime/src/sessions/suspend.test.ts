/** `SessionTable.detach`, the table's part of `suspendSession`. */
import { describe, expect, test } from 'vitest'
import { runIn, sharedStore, slowSpill, tableOf, tick } from './fixtures/tables.js'

describe('SessionTable.detach (suspendSession)', () => {
  /** A spill whose removals wait until the test settles them. */
  function removalSpill() {
    const { spill, saved } = slowSpill()
    const removals: { key: string; settle: () => void; fail: (error: Error) => void }[] = []
    spill.remove = (key) =>
      new Promise<boolean>((resolve, reject) => {
        removals.push({ key, settle: () => resolve(saved.delete(key)), fail: reject })
      })
    return { spill, saved, removals }
  }

  test("removes the store's older copy first; meanwhile the session runs nothing, and then it is the caller's alone", async () => {
    const { spill, saved, removals } = removalSpill()
    const table = tableOf(4, spill)
    saved.set('a', { name: 'older', dropped: false })
    await runIn(table, 'a')
    const detaching = table.detach('a')
    await tick()
    expect(removals.map((r) => r.key)).toEqual(['a'])
    const during = await table.take('a', Date.now(), { deadline: performance.now() + 60_000 })
    expect(during).toEqual({ ok: false, message: 'session "a" is being suspended (suspendSession): this program did not run' })
    await expect(table.detach('a')).rejects.toThrow('session "a" is being suspended already')
    removals.shift()?.settle()
    expect((await detaching)?.state.name).toBe('a')
    expect([saved.has('a'), table.size]).toEqual([false, 0])
    const next = await table.take('a', Date.now(), { deadline: performance.now() + 60_000 })
    expect([next.ok, next.ok && next.fresh, next.ok && next.entry.state]).toEqual([true, true, undefined])
  })

  test('a removal that fails leaves the session as it was; one ended meanwhile gives nothing', async () => {
    const { spill, saved, removals } = removalSpill()
    const table = tableOf(4, spill)
    saved.set('a', { name: 'older', dropped: false })
    await runIn(table, 'a')
    const failing = table.detach('a')
    await tick()
    removals.shift()?.fail(new Error('store down'))
    await expect(failing).rejects.toMatchObject({ code: 'unavailable', message: 'the session store failed (store down) when its older copy of session "a" was to be removed: the session was not suspended, and stays here as it was' })
    const after = await table.take('a', Date.now(), { deadline: performance.now() + 60_000 })
    expect([after.ok && after.entry.state?.name, saved.get('a')?.name]).toEqual(['a', 'older'])
    if (after.ok) table.give(after.entry, { state: { name: 'a2', dropped: false }, bytes: 1 }, false)
    // endSession while the copy is being removed: the session is gone, nothing is handed over.
    const detaching = table.detach('a')
    await tick()
    const ending = table.end('a')
    removals.shift()?.settle()
    await tick()
    removals.shift()?.settle()
    expect(await detaching).toBeUndefined()
    expect(await ending).toBe(true)
    expect(table.size).toBe(0)
  })

  test('with claims: one lost to another process refuses the suspend (claimed) and removes nothing of the store', async () => {
    const { claims, saved, log, spillFor } = sharedStore()
    const one = tableOf(4, spillFor('one'))
    await runIn(one, 'k')
    one.sweep(Date.now() + 2_000)
    await one.settled()
    const again = await runIn(one, 'k')
    expect(again.ok).toBe(true)
    // Its claim lapsed (the store was unreachable, say) and another process took the session and saved a newer state.
    claims.set('k', { holder: 'two', until: Date.now() + 60_000 })
    saved.set('k', { name: 'newer, by two', dropped: false })
    const error: unknown = await one.detach('k').catch((thrown: unknown) => thrown)
    expect(error).toMatchObject({
      code: 'claimed',
      message: expect.stringMatching(/^session "k" is held by another process sharing the session store \(its claim runs out in \d+ s unless renewed; .*\): this process's claim on it had lapsed: it was not suspended, and the state this process held was dropped$/),
    })
    expect([saved.get('k')?.name, claims.get('k')?.holder, one.size]).toEqual(['newer, by two', 'two', 0])
    expect(log.filter((line) => line.includes('release'))).toEqual(['one release k'])
  })

  test('close() lets a suspend in progress end first, and saves the session a failed one left', async () => {
    const { spill, saved, pending, removals } = (() => {
      const made = slowSpill({ storeWaitMs: 100 })
      const removals: (() => void)[] = []
      // The removal never answers: the suspend fails at storeWaitMs.
      made.spill.remove = () => new Promise<boolean>((resolve) => removals.push(() => resolve(true)))
      return { ...made, removals }
    })()
    const table = tableOf(4, spill)
    await runIn(table, 'a')
    const detaching = table.detach('a')
    const closing = table.close()
    await expect(detaching).rejects.toMatchObject({ code: 'unavailable' })
    // The save waits behind the removal in the key's order: it comes once the store answers that.
    removals.shift()?.()
    await tick()
    expect(pending.map((p) => p.key)).toEqual(['a'])
    pending.shift()?.settle()
    await closing
    expect(saved.get('a')?.name).toBe('a')
  })
})
