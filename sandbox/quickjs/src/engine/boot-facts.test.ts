import { spawnSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { describe, expect, test } from 'vitest'
import { spawnSourceWorker } from '@ptc/sandbox/backend'
import { BOOT_FACTS } from './boot-facts.js'
import type { QuickJSVariantName } from './module.js'

const ROOT = fileURLToPath(new URL('../../../../', import.meta.url))
const SCRIPT = ['--conditions=@ptc/source', '--import', 'tsx', 'scripts/boot-facts.ts']

test('the shipped facts are what a fresh boot on plain node finds (scripts/boot-facts.ts)', () => {
  const child = spawnSync(process.execPath, [...SCRIPT, '--print'], {
    cwd: ROOT,
    encoding: 'utf8',
    env: { ...process.env, NODE_OPTIONS: '' },
    timeout: 60_000,
  })
  expect(child.status, child.stderr).toBe(0)
  expect(JSON.parse(child.stdout), `boot-facts.ts is out of date: node ${SCRIPT.join(' ')}`).toEqual(BOOT_FACTS)
}, 70_000)

/** Boots `variant` in a fresh thread that takes `hint` as its used page count: the count its boot settled on, and a program's value. */
function bootWithHint(variant: QuickJSVariantName, hint: number): Promise<unknown> {
  const worker = spawnSourceWorker(new URL('./fixtures/boot-with-hint.ts', import.meta.url), { variant, hint })
  return new Promise<unknown>((resolve, reject) => {
    worker.once('message', resolve)
    worker.once('error', reject)
  }).finally(() => void worker.terminate())
}

describe.each(['quickjs'] as QuickJSVariantName[])('a used page count given to a boot (%s)', (variant) => {
  const right = BOOT_FACTS[variant].usedPages
  test('is checked: a wrong one (a page off either way, the start of the C stack zone, past the memory) is searched past', async () => {
    const searched = (await bootWithHint(variant, 0)) as { used: number; zoneStart: number }
    expect(searched).toMatchObject({ used: right, value: '2,4,6' })
    expect(searched.zoneStart).toBeGreaterThan(0)
    // Data below it, zeros above: the zone's start passes the page check, and is refused as no stack zone lies below it.
    const hints = [searched.zoneStart, right - 1, right + 1, 100_000, right]
    const boots = await Promise.all(hints.map((hint) => bootWithHint(variant, hint)))
    hints.forEach((hint, i) => expect(boots[i], `hint ${hint}`).toMatchObject({ used: right, value: '2,4,6' }))
  }, 60_000)
})
