import { copyFileSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { describe, expect, test } from 'vitest'
import { SandboxBackendUnavailableError } from './errors.js'
import { createIsolatedVmRuntime, isolatedVmAvailability } from './index.js'
import { hasNoNodeSnapshotFlag, loadIsolatedVm } from './load.js'

const missing = (): never => {
  const error = new Error("Cannot find module 'isolated-vm'") as Error & { code: string }
  error.code = 'MODULE_NOT_FOUND'
  throw error
}

describe('loading the optional isolated-vm module', () => {
  test('a missing module makes the factory throw a coded error that says what to install', () => {
    let caught: unknown
    try {
      createIsolatedVmRuntime({ loader: missing })
    } catch (error) {
      caught = error
    }
    expect(caught).toBeInstanceOf(SandboxBackendUnavailableError)
    const error = caught as SandboxBackendUnavailableError
    expect(error.code).toBe('SANDBOX_BACKEND_UNAVAILABLE')
    expect(error.reason).toBe('missing-module')
    expect(error.backend).toBe('isolated-vm')
    expect(error.message).toContain('`npm install isolated-vm@5` or `pnpm add isolated-vm@5`')
    expect(error.message).toContain('`npm install-scripts approve isolated-vm`')
    expect(error.message).toMatch(/python3.*make.*g\+\+/)
    expect(error.message).toContain("Cannot find module 'isolated-vm'")
    expect((error.cause as Error).message).toContain('isolated-vm')
  })

  test('isolated-vm installed without its native part (its install script never ran) says to allow and rebuild it', () => {
    // The package as npm 12 leaves it when it skips the install script: its JavaScript, no out/isolated_vm.node.
    const installed = dirname(createRequire(import.meta.url).resolve('isolated-vm/package.json'))
    const project = mkdtempSync(join(tmpdir(), 'ptc-ivm-unbuilt-'))
    try {
      const copy = join(project, 'node_modules', 'isolated-vm')
      mkdirSync(copy, { recursive: true })
      for (const file of ['package.json', 'isolated-vm.js']) copyFileSync(join(installed, file), join(copy, file))
      const loader = (): unknown => createRequire(join(project, 'index.js'))('isolated-vm')
      let caught: unknown
      try {
        loadIsolatedVm({ loader })
      } catch (error) {
        caught = error
      }
      expect(caught).toBeInstanceOf(SandboxBackendUnavailableError)
      const error = caught as SandboxBackendUnavailableError
      expect(error.reason).toBe('missing-module')
      expect(error.message).toMatch(
        /^the isolated-vm sandbox is not available: the optional dependency "isolated-vm" is installed but its native part was never built \(Cannot find module '\.\/out\/isolated_vm'\)\. Its install script did not run, or its build failed\./,
      )
      expect(error.message).toContain('`npm install-scripts approve isolated-vm`')
      expect(error.message).toContain('`npm rebuild isolated-vm`')
      expect(error.message).toContain('`onlyBuiltDependencies`')
      expect(isolatedVmAvailability({ loader })).toEqual({ available: false, reason: error.message })
    } finally {
      rmSync(project, { recursive: true, force: true })
    }
  })

  test('a module that is not isolated-vm is refused', () => {
    expect(() => loadIsolatedVm({ loader: () => ({ Isolate: 1 }) })).toThrow(
      expect.objectContaining({ code: 'SANDBOX_BACKEND_UNAVAILABLE', reason: 'invalid-module' }),
    )
  })

  test('running without --no-node-snapshot fails with a message naming the flag, before loading anything', () => {
    let loaded = false
    const attempt = () =>
      loadIsolatedVm({
        flags: { execArgv: ['--conditions=@ptc/source'], nodeOptions: '--max-old-space-size=512' },
        loader: () => ((loaded = true), {}),
      })
    expect(attempt).toThrow(expect.objectContaining({ reason: 'node-snapshot' }))
    expect(attempt).toThrow(/--no-node-snapshot/)
    expect(loaded).toBe(false)
  })

  test('the snapshot check can be turned off for a node build without a startup snapshot', () => {
    expect(() =>
      loadIsolatedVm({ flags: { execArgv: [], nodeOptions: undefined }, checkNodeSnapshot: false, loader: missing }),
    ).toThrow(expect.objectContaining({ reason: 'missing-module' }))
  })

  test('the flag counts in execArgv or in NODE_OPTIONS', () => {
    expect(hasNoNodeSnapshotFlag(['--no-node-snapshot'], undefined)).toBe(true)
    expect(hasNoNodeSnapshotFlag([], '--inspect  --no-node-snapshot')).toBe(true)
    expect(hasNoNodeSnapshotFlag([], '--no-node-snapshots')).toBe(false)
    expect(hasNoNodeSnapshotFlag(['--conditions=x'], undefined)).toBe(false)
  })

  test('availability is reported without throwing', () => {
    const result = isolatedVmAvailability({ loader: missing })
    expect(result.available).toBe(false)
    if (!result.available) expect(result.reason).toContain('pnpm add isolated-vm@5')
  })
})
