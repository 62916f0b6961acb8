import { spawnSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { expect, test } from 'vitest'

const ROOT = fileURLToPath(new URL('../../../', import.meta.url))
const FIXTURE = fileURLToPath(new URL('./fixtures/session-parse.ts', import.meta.url))

/**
 * A session program is parsed whole (acorn, about 0.3-0.5 s per MiB here): in worker isolation the
 * engine's worker does it, so the host's event loop never waits for it; inline, the calling thread does.
 */
test.each([
  ['worker', { acornHere: false, value: 42 }],
  ['inline', { acornHere: true, value: 42 }],
])('who parses session programs: %s isolation', (isolation, expected) => {
  const child = spawnSync(process.execPath, ['--conditions=@ptc/source', '--import', 'tsx', FIXTURE, isolation], {
    cwd: ROOT,
    encoding: 'utf8',
    timeout: 60_000,
    env: { ...process.env, NODE_OPTIONS: '' },
  })
  expect(child.status, child.stderr).toBe(0)
  expect(JSON.parse(child.stdout.trim().split('\n').at(-1) ?? 'null')).toEqual(expected)
}, 90_000)
