import { copyFileSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { describe, expect, test } from 'vitest'
import { SandboxBackendUnavailableError } from './errors.js'
import { createIsolatedVmRuntime, isolatedVmAvailability } from './index.js'
import { hasNoNodeSnapshotFlag, isolatedVmCandidates, loadIsolatedVm } from './load.js'

/** The isolated-vm major this Node's line installs: 7 from Node 24 on, 5 before (Node 18-20). */
const lineMajor = Number.parseInt(process.versions.node, 10) >= 24 ? 7 : 5

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
    expect(error.message).toContain(`\`npm install isolated-vm@${lineMajor}\` or \`pnpm add isolated-vm@${lineMajor}\``)
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
    if (!result.available) expect(result.reason).toContain(`pnpm add isolated-vm@${lineMajor}`)
  })

  test('the install hint names the isolated-vm of the Node line: 5 on Node 20, 6 on Node 22, 7 on Node 24', () => {
    const hint = (nodeVersion: string): string => {
      try {
        loadIsolatedVm({ loader: missing, checkNodeSnapshot: false, nodeVersion })
      } catch (error) {
        return (error as Error).message
      }
      return ''
    }
    expect(hint('20.20.2')).toContain('`npm install isolated-vm@5` or `pnpm add isolated-vm@5` (this is Node 20: ')
    expect(hint('22.22.0')).toContain('`npm install isolated-vm@6` or `pnpm add isolated-vm@6` (this is Node 22: ')
    expect(hint('24.22.3')).toContain('`npm install isolated-vm@7` or `pnpm add isolated-vm@7` (this is Node 24: ')
    expect(hint('v26.0.0')).toContain('`pnpm add isolated-vm@7` (this is Node 26: ')
  })

  test('the package built for the running Node is tried first: isolated-vm (5) before Node 24, the isolated-vm-7 alias from 24', () => {
    expect(isolatedVmCandidates('20.20.2')).toEqual(['isolated-vm', 'isolated-vm-7'])
    expect(isolatedVmCandidates('22.22.0')).toEqual(['isolated-vm', 'isolated-vm-7'])
    expect(isolatedVmCandidates('24.0.0')).toEqual(['isolated-vm-7', 'isolated-vm'])
    expect(isolatedVmCandidates('26.1.0')).toEqual(['isolated-vm-7', 'isolated-vm'])
  })

  test("isolated-vm 7 without a binary for this Node (node-gyp-build's error) says to allow and rebuild it", () => {
    const loader = (): never => {
      throw new Error(
        'No native build was found for platform=linux arch=x64 runtime=node abi=115 uv=1 libc=glibc node=20.20.2\n' +
          '    loaded from: /project/node_modules/isolated-vm-7\n',
      )
    }
    const error = (() => {
      try {
        loadIsolatedVm({ loader, checkNodeSnapshot: false })
      } catch (caught) {
        return caught as SandboxBackendUnavailableError
      }
      throw new Error('loadIsolatedVm did not throw')
    })()
    expect(error.reason).toBe('missing-module')
    expect(error.message).toContain(
      'is installed but its native part was never built (No native build was found for platform=linux arch=x64 runtime=node abi=115 uv=1 libc=glibc node=20.20.2)',
    )
    expect(error.message).toContain('`npm rebuild isolated-vm`')
  })

  test('a native part built for another Node says so, with both module versions, and how to rebuild it', () => {
    const loader = (): never => {
      const error = new Error(
        "The module '/project/node_modules/isolated-vm/out/isolated_vm.node'\n" +
          'was compiled against a different Node.js version using\nNODE_MODULE_VERSION 115. This version of Node.js requires\n' +
          'NODE_MODULE_VERSION 137. Please try re-compiling or re-installing\nthe module (for instance, using `npm rebuild` or `npm install`).',
      ) as Error & { code: string }
      error.code = 'ERR_DLOPEN_FAILED'
      throw error
    }
    expect(() => loadIsolatedVm({ loader, checkNodeSnapshot: false })).toThrow(
      expect.objectContaining({
        reason: 'missing-module',
        message: expect.stringContaining(
          "its native part was built for another Node version (The module '/project/node_modules/isolated-vm/out/isolated_vm.node': NODE_MODULE_VERSION 115, this Node needs 137). Its install script did not run",
        ),
      }),
    )
  })

  test.skipIf(!isolatedVmAvailability().available)(
    'here the isolated-vm built for this Node loads, under the name its line installs',
    () => {
      const requireHere = createRequire(import.meta.url)
      const [first] = isolatedVmCandidates()
      const ivm = requireHere(first as string) as { Isolate: unknown }
      expect(typeof ivm.Isolate).toBe('function')
      const version = (requireHere(`${first as string}/package.json`) as { version: string }).version
      expect(Number.parseInt(version, 10)).toBe(lineMajor)
    },
  )
})
