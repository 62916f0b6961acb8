/**
 * The incremental, JavaScript-only build of a workspace package and the
 * workspace packages it depends on (by default `@ptc/cli`: everything every
 * `ptc` command loads, `ptc serve`'s `@ptc/mcp` included). Used by
 * `pnpm demo` and by test/cli.
 *
 *   node --import tsx scripts/build-js.ts [@ptc/cli …]
 *
 * A package is rebuilt only when it is stale: one of its `exports` targets is
 * missing, or a `.js` file in its `dist/` is older than its newest source
 * (`src/` files and folders except tests, `tsup.config.ts`, `package.json`).
 * Each package bundles only its own sources (tsup keeps dependencies
 * external), so one package's build never makes another stale.
 *
 * Declarations: `pnpm build` (tsup with `clean` and `dts`) always rebuilds a
 * whole `dist/` with its `.d.ts` files. A JavaScript-only build runs tsup with
 * `--no-dts --no-clean` (files are rewritten in place, so a `ptc` process
 * started from the previous build keeps working) and then removes every file
 * of `dist/` it did not rewrite: stale chunks and the `.d.ts` files of the
 * previous sources. So a `dist/` holds declarations only when they were built
 * from the same sources as its JavaScript, and a `dist/` without them is
 * never complete for packing: `pnpm build` makes it so.
 *
 * Concurrent builds (test files in parallel, a demo during a test run) share
 * one lock folder, `node_modules/.cache/ptc-build-js.lock`.
 */
import { execFileSync } from 'node:child_process'
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs'
import { join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'

export const ROOT = fileURLToPath(new URL('..', import.meta.url))

/** Workspace folders, as in pnpm-workspace.yaml. */
const WORKSPACE_GLOBS = ['packages', 'sandbox']
const WORKSPACE_DIRS = ['bindings']

interface WorkspacePackage {
  readonly name: string
  /** Absolute folder. */
  readonly dir: string
  /** Workspace dependencies (`dependencies` and `optionalDependencies`). */
  readonly deps: readonly string[]
  /** `dist/…` files the `exports` map points at. */
  readonly exportTargets: readonly string[]
}

interface PackageJson {
  name?: string
  dependencies?: Record<string, string>
  optionalDependencies?: Record<string, string>
  exports?: unknown
}

function workspacePackages(root: string): Map<string, WorkspacePackage> {
  const dirs = [...WORKSPACE_DIRS.map((d) => join(root, d))]
  for (const glob of WORKSPACE_GLOBS) {
    const parent = join(root, glob)
    if (!existsSync(parent)) continue
    for (const entry of readdirSync(parent)) dirs.push(join(parent, entry))
  }
  const out = new Map<string, WorkspacePackage>()
  for (const dir of dirs) {
    const file = join(dir, 'package.json')
    if (!existsSync(file)) continue
    const pkg = JSON.parse(readFileSync(file, 'utf8')) as PackageJson
    if (pkg.name === undefined) continue
    const deps = [...Object.entries(pkg.dependencies ?? {}), ...Object.entries(pkg.optionalDependencies ?? {})]
      .filter(([, version]) => version.startsWith('workspace:'))
      .map(([name]) => name)
    out.set(pkg.name, { name: pkg.name, dir, deps, exportTargets: exportTargets(pkg.exports) })
  }
  return out
}

/** The `import` targets of an exports map (`./dist/index.js`, …). */
function exportTargets(exports: unknown): string[] {
  const targets: string[] = []
  const stack: unknown[] = [exports]
  while (stack.length > 0) {
    const node = stack.pop()
    if (typeof node !== 'object' || node === null) continue
    for (const [key, value] of Object.entries(node)) {
      if (key === 'import' && typeof value === 'string') targets.push(value)
      else if (key !== '@ptc/source' && key !== 'types') stack.push(value)
    }
  }
  return targets
}

/** `names` and their workspace dependencies, dependencies first. */
export function buildOrder(names: readonly string[], root: string = ROOT): WorkspacePackage[] {
  const all = workspacePackages(root)
  const order: WorkspacePackage[] = []
  const state = new Map<string, 'visiting' | 'done'>()
  // Iterative depth-first post-order: a package after everything it depends on.
  const stack: { name: string; expanded: boolean }[] = names.map((name) => ({ name, expanded: false })).reverse()
  while (stack.length > 0) {
    const frame = stack.pop() as { name: string; expanded: boolean }
    const pkg = all.get(frame.name)
    if (pkg === undefined) throw new Error(`build-js: no workspace package named ${frame.name}`)
    if (frame.expanded) {
      state.set(pkg.name, 'done')
      order.push(pkg)
      continue
    }
    if (state.get(pkg.name) === 'done') continue
    if (state.get(pkg.name) === 'visiting') throw new Error(`build-js: dependency cycle through ${pkg.name}`)
    state.set(pkg.name, 'visiting')
    stack.push({ name: pkg.name, expanded: true })
    for (const dep of [...pkg.deps].reverse()) if (state.get(dep) !== 'done') stack.push({ name: dep, expanded: false })
  }
  return order
}

/** Newest modification time of a package's sources; folders count, so a deleted file makes the build stale. */
function newestSource(dir: string): number {
  let newest = 0
  const stack = [join(dir, 'src'), join(dir, 'tsup.config.ts'), join(dir, 'package.json')]
  while (stack.length > 0) {
    const path = stack.pop() as string
    const info = statSync(path, { throwIfNoEntry: false })
    if (info === undefined) continue
    if (info.isDirectory()) {
      newest = Math.max(newest, info.mtimeMs)
      for (const entry of readdirSync(path)) stack.push(join(path, entry))
    } else if (!path.endsWith('.test.ts') && !path.endsWith('.test-d.ts')) newest = Math.max(newest, info.mtimeMs)
  }
  return newest
}

/** Every file under `dir` with its modification time. */
function filesOf(dir: string): Map<string, number> {
  const out = new Map<string, number>()
  const stack = [dir]
  while (stack.length > 0) {
    const path = stack.pop() as string
    const info = statSync(path, { throwIfNoEntry: false })
    if (info === undefined) continue
    if (info.isDirectory()) for (const entry of readdirSync(path)) stack.push(join(path, entry))
    else out.set(path, info.mtimeMs)
  }
  return out
}

/** Why `pkg` needs a build, or undefined when its `dist/` is current. */
export function staleReason(pkg: WorkspacePackage): string | undefined {
  if (!existsSync(join(pkg.dir, 'dist'))) return 'no dist/ yet'
  for (const target of pkg.exportTargets) if (!existsSync(join(pkg.dir, target))) return `${target} is missing`
  const dist = join(pkg.dir, 'dist')
  const js = [...filesOf(dist)].filter(([path]) => path.endsWith('.js'))
  if (js.length === 0) return 'dist/ is empty'
  const sources = newestSource(pkg.dir)
  const oldest = js.reduce((a, b) => (b[1] < a[1] ? b : a))
  if (oldest[1] < sources) return `${relative(pkg.dir, oldest[0])} is older than the sources`
  return undefined
}

/** Builds one package's JavaScript and removes what that build did not write. */
function buildPackage(pkg: WorkspacePackage, root: string): void {
  const dist = join(pkg.dir, 'dist')
  const before = filesOf(dist)
  execFileSync(join(root, 'node_modules/.bin/tsup'), ['--no-dts', '--no-clean', '--silent'], { cwd: pkg.dir, stdio: ['ignore', 'ignore', 'pipe'] })
  for (const [path, mtime] of before) {
    const now = statSync(path, { throwIfNoEntry: false })
    if (now !== undefined && now.mtimeMs === mtime) rmSync(path, { force: true })
  }
}

export interface BuildJsOptions {
  /** The packages to build with their workspace dependencies; default `['@ptc/cli']`. */
  readonly packages?: readonly string[]
  readonly root?: string
  /** Packages whose failed build is reported and skipped. */
  readonly optional?: readonly string[]
  /**
   * When a package other than the last one (the one asked for) does not build but has a previous
   * `dist/`, report it and keep that build (sources mid-edit). Default false: the failure is thrown.
   */
  readonly keepPreviousOnFailure?: boolean
  /** Progress and warnings; default stderr. */
  readonly log?: (line: string) => void
}

export interface BuildJsReport {
  /** Folders rebuilt (relative to the root). */
  readonly built: readonly string[]
  /** Folders whose build failed and was tolerated. */
  readonly failed: readonly string[]
}

const sleep = (ms: number): void => void Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms)

/** A lock held by a live process is waited for; one whose process is gone, or untouched for 10 minutes, is taken over. */
function acquireLock(lock: string): void {
  mkdirSync(join(lock, '..'), { recursive: true })
  while (true) {
    try {
      mkdirSync(lock)
      writeFileSync(join(lock, 'pid'), String(process.pid))
      return
    } catch (error) {
      if ((error as { code?: unknown }).code !== 'EEXIST') throw error
    }
    const age = Date.now() - (statSync(lock, { throwIfNoEntry: false })?.mtimeMs ?? Date.now())
    if (age > 600_000 || (age > 1_000 && !holderAlive(lock))) rmSync(lock, { recursive: true, force: true })
    else sleep(200)
  }
}

function holderAlive(lock: string): boolean {
  let pid: number
  try {
    pid = Number(readFileSync(join(lock, 'pid'), 'utf8'))
  } catch {
    return true // just created; its pid follows
  }
  if (!Number.isInteger(pid) || pid <= 0) return true
  try {
    process.kill(pid, 0) // signal 0: only checks that the process exists
    return true
  } catch (error) {
    return (error as { code?: unknown }).code === 'EPERM'
  }
}

/** Builds what is stale, dependencies first (JavaScript only: running `ptc` needs no declarations). */
export function buildJs(options: BuildJsOptions = {}): BuildJsReport {
  const root = options.root ?? ROOT
  const log = options.log ?? ((line: string) => void process.stderr.write(`${line}\n`))
  const optional = new Set(options.optional ?? [])
  const order = buildOrder(options.packages ?? ['@ptc/cli'], root)
  const last = order.at(-1)
  const built: string[] = []
  const failed: string[] = []
  const lock = join(root, 'node_modules/.cache/ptc-build-js.lock')
  acquireLock(lock)
  try {
    for (const pkg of order) {
      const folder = relative(root, pkg.dir)
      if (!existsSync(join(pkg.dir, 'tsup.config.ts'))) continue
      const reason = staleReason(pkg)
      if (reason === undefined) continue
      utimesSync(lock, new Date(), new Date())
      const started = performance.now()
      try {
        buildPackage(pkg, root)
      } catch (error) {
        const detail = String((error as { stderr?: unknown }).stderr ?? (error as Error).message).trim().split('\n')[0]
        if (optional.has(pkg.name)) {
          log(`build-js: ${folder} does not build (${detail}); skipped`)
          failed.push(folder)
          continue
        }
        if (options.keepPreviousOnFailure === true && pkg !== last && existsSync(join(pkg.dir, 'dist/index.js'))) {
          log(`build-js: ${folder} does not build now; using its previous dist/ (${detail})`)
          failed.push(folder)
          continue
        }
        throw error
      }
      built.push(folder)
      log(`build-js: ${folder} (${reason}): built in ${((performance.now() - started) / 1000).toFixed(1)} s`)
    }
  } finally {
    rmSync(lock, { recursive: true, force: true })
  }
  return { built, failed }
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  const names = process.argv.slice(2)
  try {
    buildJs(names.length === 0 ? {} : { packages: names })
  } catch (error) {
    const stderr = (error as { stderr?: unknown }).stderr
    process.stderr.write(`build-js: ${stderr === undefined ? String(error) : String(stderr)}\n`)
    process.exitCode = 1
  }
}
