/**
 * `scripts/node-line.ts` (issue 51) offline: a complete cached copy is used without the registry, a partial one is
 * not, and a bad version is refused with what to pass. The registry is pointed at a closed loopback port, so any
 * attempt to reach it fails instead of going out.
 */
import { spawnSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, expect, test } from 'vitest'
import { ROOT } from '../../scripts/build-js.js'

const cache = mkdtempSync(join(tmpdir(), 'ptc-node-line-'))
afterAll(() => rmSync(cache, { recursive: true, force: true }))

/** A cached copy of `version` in `cache`; `complete: false` leaves out its headers. */
function cached(version: string, complete = true): string {
  const dir = join(cache, version)
  mkdirSync(join(dir, 'package', 'bin'), { recursive: true })
  writeFileSync(join(dir, 'package', 'bin', 'node'), '#!/bin/sh\n', { mode: 0o755 })
  if (complete) {
    mkdirSync(join(dir, 'package', 'include', 'node'), { recursive: true })
    writeFileSync(join(dir, 'package', 'include', 'node', 'node.h'), '')
  }
  writeFileSync(join(dir, 'integrity'), 'sha512-test')
  writeFileSync(join(dir, 'version'), version)
  return join(dir, 'package', 'bin')
}

function nodeLine(spec: string): { status: number | null; stdout: string; stderr: string } {
  return spawnSync(process.execPath, ['--import', 'tsx', join(ROOT, 'scripts/node-line.ts'), spec], {
    cwd: ROOT,
    encoding: 'utf8',
    timeout: 60_000,
    env: {
      ...process.env,
      PTC_NODE_CACHE: cache,
      npm_config_registry: 'http://127.0.0.1:9/',
      npm_config_fetch_retries: '0',
    },
  })
}

test('a complete cached copy of an exact version is used as it is, and its bin folder printed', () => {
  const bin = cached('99.1.2')
  const out = nodeLine('99.1.2')
  expect(out.status, out.stderr).toBe(0)
  expect(out.stdout.trim()).toBe(bin)
})

test('a line the registry cannot answer for falls back to its newest complete cached copy', () => {
  cached('98.1.0')
  const newest = cached('98.10.0')
  cached('98.11.0', false)
  const out = nodeLine('98')
  expect(out.status, out.stderr).toBe(0)
  expect(out.stdout.trim()).toBe(newest)
  expect(out.stderr).toMatch(/the registry did not answer .*using the cached 98\.10\.0/)
})

test('a spec that is neither a line nor a version is refused with what to pass', () => {
  const out = nodeLine('latest')
  expect(out.status).not.toBe(0)
  expect(out.stderr).toContain('expected a Node line (24) or a version (24.22.3), got "latest"')
})
