import { createRequire } from 'node:module'
import type IsolatedVM from 'isolated-vm'
import { SandboxBackendUnavailableError } from './errors.js'

/** The isolated-vm module namespace (internal: public types never mention isolated-vm). */
export type IvmModule = typeof IsolatedVM

/** What lets a package manager run isolated-vm's install script (which builds its native part). */
const ALLOW_BUILD =
  "npm 12+ and pnpm 10+ run a dependency's install script only when the project allows it: " +
  '`npm install-scripts approve isolated-vm` (it writes `"allowScripts": { "isolated-vm": true }` into package.json), or pnpm\'s ' +
  '`onlyBuiltDependencies` (`pnpm approve-builds`)'

const BUILD_NEEDS =
  'It has no prebuilt binary for every platform and then builds from source: python3, make and g++ must be ' +
  'installed (node-gyp needs the Node headers; `npm_config_nodedir=/usr` if they live in /usr/include/node)'

const QUICKJS_INSTEAD = 'Or use the default QuickJS backend (`createQuickJSRuntime` from @ptc/sandbox-quickjs).'

const INSTALL_HINT =
  `Install it with \`npm install isolated-vm@5\` or \`pnpm add isolated-vm@5\` (5.x supports Node 18-20; 6.x needs ` +
  `Node 22). ${BUILD_NEEDS}, and ${ALLOW_BUILD}. ${QUICKJS_INSTEAD}`

const BUILD_HINT =
  `Its install script did not run, or its build failed. ${ALLOW_BUILD}; then \`npm rebuild isolated-vm\` (or ` +
  `\`pnpm rebuild isolated-vm\`) builds it. ${BUILD_NEEDS}. ${QUICKJS_INSTEAD}`

/**
 * Whether a failed `require('isolated-vm')` found the package but not its native part (`out/isolated_vm.node`,
 * which its install script builds): the package's own `require('./out/isolated_vm')` failed.
 */
function nativePartMissing(error: unknown): boolean {
  if (!(error instanceof Error) || (error as Error & { code?: unknown }).code !== 'MODULE_NOT_FOUND') return false
  return /Cannot find module '[^']*out[\\/]isolated_vm(\.node)?'/.test(error.message)
}

const SNAPSHOT_HINT =
  'isolated-vm needs Node to run without its startup snapshot on Node 20+: start node with ' +
  '`--no-node-snapshot` (or put it in NODE_OPTIONS; in vitest use `pool: "forks"` with ' +
  '`execArgv: ["--no-node-snapshot"]`). Without it isolates can crash the process.'

/** True when this process runs without the Node startup snapshot (`--no-node-snapshot`). */
export function hasNoNodeSnapshotFlag(execArgv: readonly string[], nodeOptions: string | undefined): boolean {
  if (execArgv.includes('--no-node-snapshot')) return true
  if (nodeOptions === undefined) return false
  return nodeOptions.split(/\s+/).includes('--no-node-snapshot')
}

const requireHere = createRequire(import.meta.url)
let cached: IvmModule | undefined

function defaultLoader(): unknown {
  cached ??= requireHere('isolated-vm') as IvmModule
  return cached
}

/** Options of `loadIsolatedVm` (the same names as in `IsolatedVmRuntimeOptions`). */
export interface LoadOptions {
  loader?: (() => unknown) | undefined
  checkNodeSnapshot?: boolean | undefined
  /** The process flags to check (tests); default `process.execArgv` and `NODE_OPTIONS`. */
  flags?: { execArgv: readonly string[]; nodeOptions: string | undefined } | undefined
}

/**
 * Loads isolated-vm synchronously (it is a CommonJS native addon) or throws
 * `SandboxBackendUnavailableError` with what to install or how to start node.
 */
export function loadIsolatedVm(options: LoadOptions = {}): IvmModule {
  const flags = options.flags ?? { execArgv: process.execArgv, nodeOptions: process.env['NODE_OPTIONS'] }
  if (options.checkNodeSnapshot !== false && !hasNoNodeSnapshotFlag(flags.execArgv, flags.nodeOptions)) {
    throw new SandboxBackendUnavailableError('node-snapshot', `the isolated-vm sandbox cannot start: ${SNAPSHOT_HINT}`)
  }
  let mod: unknown
  try {
    mod = (options.loader ?? defaultLoader)()
  } catch (error) {
    const detail = error instanceof Error ? error.message.split('\n')[0] : String(error)
    if (nativePartMissing(error)) {
      throw new SandboxBackendUnavailableError(
        'missing-module',
        `the isolated-vm sandbox is not available: the optional dependency "isolated-vm" is installed but its native part was never built (${detail}). ${BUILD_HINT}`,
        { cause: error },
      )
    }
    throw new SandboxBackendUnavailableError(
      'missing-module',
      `the isolated-vm sandbox is not available: the optional dependency "isolated-vm" could not be loaded (${detail}). ${INSTALL_HINT}`,
      { cause: error },
    )
  }
  if (!isIvmModule(mod)) {
    throw new SandboxBackendUnavailableError(
      'invalid-module',
      `the isolated-vm sandbox is not available: the loaded module is not isolated-vm 5 (no Isolate/Callback classes). ${INSTALL_HINT}`,
    )
  }
  return mod
}

/**
 * Whether isolated-vm can be used in this process (for `describe.skipIf` and feature detection);
 * never throws. `reason` is the message of the error `createIsolatedVmRuntime` would throw.
 */
export function isolatedVmAvailability(
  options: LoadOptions = {},
): { available: true } | { available: false; reason: string } {
  try {
    loadIsolatedVm(options)
    return { available: true }
  } catch (error) {
    return { available: false, reason: error instanceof Error ? error.message : String(error) }
  }
}

function isIvmModule(mod: unknown): mod is IvmModule {
  if (mod === null || (typeof mod !== 'object' && typeof mod !== 'function')) return false
  const m = mod as Record<string, unknown>
  return (
    typeof m['Isolate'] === 'function' && typeof m['Callback'] === 'function' && typeof m['Reference'] === 'function'
  )
}
