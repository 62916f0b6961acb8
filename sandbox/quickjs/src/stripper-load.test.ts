import { spawnSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { expect, test } from 'vitest'

const ROOT = fileURLToPath(new URL('../../../', import.meta.url))
const FIXTURE = fileURLToPath(new URL('./fixtures/stripper-load.ts', import.meta.url))

/** Loading sucrase blocks a thread for 35-50 ms: only a process that strips a program pays for it, and a prewarmed runtime loads it before the first run. */
test.each([
  ['prewarm', { afterImport: false, afterCreate: true, afterRun: true, value: 42 }],
  ['no-prewarm', { afterImport: false, afterCreate: false, afterRun: true, value: 42 }],
])('importing the package does not load the TypeScript stripper; %s', (mode, expected) => {
  const child = spawnSync(process.execPath, ['--conditions=@ptc/source', '--import', 'tsx', FIXTURE, mode], {
    cwd: ROOT,
    encoding: 'utf8',
    timeout: 60_000,
    env: { ...process.env, NODE_OPTIONS: '' },
  })
  expect(child.status, child.stderr).toBe(0)
  expect(JSON.parse(child.stdout.trim().split('\n').at(-1) ?? 'null')).toEqual(expected)
}, 90_000)
