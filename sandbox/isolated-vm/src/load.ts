import { createRequire } from 'node:module'
import type IsolatedVM from 'isolated-vm'
import { SandboxBackendUnavailableError } from './errors.js'

/** The isolated-vm module namespace (internal: public types never mention isolated-vm). */
export type IvmModule = typeof IsolatedVM

/** What lets a package manager run isolated-vm's install script (which builds its native part). */
const ALLOW_BUILD =
  "npm 12+ and pnpm 10+ run a dependency's install script only when the project allows it: " +
  '`npm install-scripts approve isolated-vm` (it writes `"allowScripts": { "isolated-vm": true }` into ' +
  "package.json), or pnpm's " +
  '`onlyBuiltDependencies` (`pnpm approve-builds`)'

const BUILD_NEEDS =
  'It has no prebuilt binary for every platform and then builds from source: python3, make and g++ must be ' +
  'installed (node-gyp needs the Node headers; `npm_config_nodedir=/usr` if they live in /usr/include/node)'

const QUICKJS_INSTEAD = 'Or use the default QuickJS backend (`createQuickJSRuntime` from @ptc/sandbox-quickjs).'

/**
 * The isolated-vm majors ptc installs, each under the name `require` finds it by: isolated-vm 5 builds for
 * Node 18 to 20 only, isolated-vm 6 and 7 need the V8 of Node 22 and 24 (and do not build on Node 20), so the
 * package's optional dependencies carry both, `isolated-vm` (5.0.4) and the npm alias `isolated-vm-7` (7.0.2).
 * A package manager skips the one whose engines or build do not fit the Node it runs on.
 */
export const ISOLATED_VM_PACKAGES = { legacy: 'isolated-vm', current: 'isolated-vm-7' } as const

/** The first Node major isolated-vm 7 (the `isolated-vm-7` alias) is for. */
const CURRENT_FROM_NODE = 24

function nodeMajor(nodeVersion: string): number {
  return Number.parseInt(nodeVersion.replace(/^v/, ''), 10)
}

/**
 * The package names to `require` on Node `nodeVersion`, the one built for that Node first. The other comes
 * second: a project may have installed a newer isolated-vm under the plain name itself.
 */
export function isolatedVmCandidates(nodeVersion: string = process.versions.node): readonly string[] {
  const { legacy, current } = ISOLATED_VM_PACKAGES
  return nodeMajor(nodeVersion) >= CURRENT_FROM_NODE ? [current, legacy] : [legacy, current]
}

/** What to install on Node `nodeVersion`, and why that major. */
function installHint(nodeVersion: string): string {
  const major = nodeMajor(nodeVersion)
  const install = (version: number, why: string): string =>
    `Install it with \`npm install isolated-vm@${version}\` or \`pnpm add isolated-vm@${version}\` (${why}). ` +
    `${BUILD_NEEDS}, and ${ALLOW_BUILD}. ${QUICKJS_INSTEAD}`
  if (major >= CURRENT_FROM_NODE)
    return install(7, `this is Node ${major}: isolated-vm 7 is the line for Node 24 and later, 5.x supports Node 18-20`)
  if (major >= 22)
    return install(6, `this is Node ${major}: isolated-vm 6 supports Node 22, 7 needs Node 24, 5.x supports Node 18-20`)
  return install(5, `this is Node ${major}: 5.x supports Node 18-20; 6.x needs Node 22 and 7.x Node 24`)
}

const BUILD_HINT =
  `Its install script did not run, or its build failed. ${ALLOW_BUILD}; then \`npm rebuild isolated-vm\` (or ` +
  `\`pnpm rebuild isolated-vm\`) builds it. ${BUILD_NEEDS}. ${QUICKJS_INSTEAD}`

/**
 * Whether a failed `require('isolated-vm')` found the package but not its native part, which its install script
 * builds: isolated-vm 5's own `require('./out/isolated_vm')` failed, or isolated-vm 6/7's `node-gyp-build`
 * found neither a prebuilt binary for this Node nor a build of its own.
 */
function nativePartMissing(error: unknown): boolean {
  if (!(error instanceof Error)) return false
  if (/^No native build was found for /.test(error.message)) return true
  if ((error as Error & { code?: unknown }).code !== 'MODULE_NOT_FOUND') return false
  return /Cannot find module '[^']*out[\\/]isolated_vm(\.node)?'/.test(error.message)
}

/** Whether the native part was built against another Node (its `NODE_MODULE_VERSION` is not this one's). */
function builtForAnotherNode(error: unknown): boolean {
  return (
    error instanceof Error &&
    (error as Error & { code?: unknown }).code === 'ERR_DLOPEN_FAILED' &&
    /NODE_MODULE_VERSION/.test(error.message)
  )
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

/**
 * Requires the isolated-vm built for this Node: the first of `isolatedVmCandidates()` that loads. When none
 * does, throws the first one's error (the package for this Node line: what to install or rebuild is about it).
 */
function defaultLoader(): unknown {
  if (cached !== undefined) return cached
  const errors: unknown[] = []
  for (const name of isolatedVmCandidates()) {
    try {
      cached = requireHere(name) as IvmModule
      return cached
    } catch (error) {
      errors.push(error)
    }
  }
  throw errors[0]
}

/** Options of `loadIsolatedVm` (the same names as in `IsolatedVmRuntimeOptions`). */
export interface LoadOptions {
  loader?: (() => unknown) | undefined
  checkNodeSnapshot?: boolean | undefined
  /** The process flags to check (tests); default `process.execArgv` and `NODE_OPTIONS`. */
  flags?: { execArgv: readonly string[]; nodeOptions: string | undefined } | undefined
  /** The Node version whose isolated-vm line the messages name (tests); default `process.versions.node`. */
  nodeVersion?: string | undefined
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
  const installHintHere = installHint(options.nodeVersion ?? process.versions.node)
  let mod: unknown
  try {
    mod = (options.loader ?? defaultLoader)()
  } catch (error) {
    const detail = error instanceof Error ? error.message.split('\n')[0] : String(error)
    if (builtForAnotherNode(error)) {
      const abi = /NODE_MODULE_VERSION (\d+)[\s\S]*NODE_MODULE_VERSION (\d+)/.exec((error as Error).message)
      const versions = abi === null ? '' : `: NODE_MODULE_VERSION ${abi[1]}, this Node needs ${abi[2]}`
      throw new SandboxBackendUnavailableError(
        'missing-module',
        `the isolated-vm sandbox is not available: the optional dependency "isolated-vm" is installed but its ` +
          `native part was built for another Node version (${detail}${versions}). ${BUILD_HINT}`,
        { cause: error },
      )
    }
    if (nativePartMissing(error)) {
      throw new SandboxBackendUnavailableError(
        'missing-module',
        `the isolated-vm sandbox is not available: the optional dependency "isolated-vm" is installed but its ` +
          `native part was never built (${detail}). ${BUILD_HINT}`,
        { cause: error },
      )
    }
    throw new SandboxBackendUnavailableError(
      'missing-module',
      `the isolated-vm sandbox is not available: the optional dependency "isolated-vm" could not be loaded ` +
        `(${detail}). ${installHintHere}`,
      { cause: error },
    )
  }
  if (!isIvmModule(mod)) {
    throw new SandboxBackendUnavailableError(
      'invalid-module',
      `the isolated-vm sandbox is not available: the loaded module is not isolated-vm (no ` +
        `Isolate/Callback/Reference classes). ${installHintHere}`,
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
