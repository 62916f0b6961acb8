/**
 * The incremental, JavaScript-only build of a workspace package and the
 * workspace packages it depends on (by default `@ptc/cli`: everything every
 * `ptc` command loads, `ptc serve`'s `@ptc/mcp` included). Used by
 * `pnpm demo` and by test/cli.
 *
 *   node --import tsx scripts/build-js.ts [@ptc/cli …]
 *   node --import tsx scripts/build-js.ts --declarations [@ptc/tools …]   (default: every package)
 *
 * A package is rebuilt only when it is stale: one of its `exports` targets is
 * missing, or a `.js` file in its `dist/` is older than its newest source
 * (`src/` files and folders except tests, `tsup.config.ts`, `package.json`).
 * Each package bundles only its own sources (tsup keeps dependencies
 * external), so one package's build never makes another stale.
 *
 * This build runs tsup into a folder of its own and installs the result in
 * `dist/` file by file, an unchanged file left in place and a changed one
 * renamed over it, so a `ptc` process started from the previous build, or
 * starting during this one, reads whole files; then it removes every file of
 * `dist/` it did not write: stale chunks and the `.d.ts` files of the previous
 * sources. So a `dist/` holds declarations only when they were built from the
 * same sources as its JavaScript, and a `dist/` without them is never complete
 * for packing: `declarations: true` (what `scripts/pack.ts` asks for) or
 * `pnpm build` makes it so, with one TypeScript program for every package
 * (`build-dts.ts`). Dependencies are built first.
 *
 * Concurrent builds (test files in parallel, a demo during a test run) share
 * one lock folder, `node_modules/.cache/ptc-build-js.lock`, taken for one
 * package's build at a time (a current package is not waited for).
 */
import { execFileSync } from 'node:child_process'
import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  utimesSync,
  writeFileSync,
} from 'node:fs'
import { basename, dirname, join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import { emitDeclarations, filesOf, installDeclarations } from './build-dts.js'
import { buildOrder, ROOT, workspacePackageNames, type WorkspacePackage } from './workspace-packages.js'

export { buildOrder, ROOT, workspacePackageNames } from './workspace-packages.js'

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

/**
 * Why `pkg` needs a build, or undefined when its `dist/` is current: its JavaScript, and with
 * `declarations` its `.d.ts` files too.
 */
export function staleReason(pkg: WorkspacePackage, declarations = false): string | undefined {
  if (!existsSync(join(pkg.dir, 'dist'))) return 'no dist/ yet'
  const targets = declarations ? [...pkg.exportTargets, ...pkg.typeTargets] : pkg.exportTargets
  for (const target of targets) if (!existsSync(join(pkg.dir, target))) return `${target} is missing`
  const dist = join(pkg.dir, 'dist')
  const built = [...filesOf(dist)].filter(([path]) => path.endsWith('.js') || (declarations && path.endsWith('.d.ts')))
  if (built.length === 0) return 'dist/ is empty'
  const sources = newestSource(pkg.dir)
  const oldest = built.reduce((a, b) => (b[1] < a[1] ? b : a))
  if (oldest[1] < sources) return `${relative(pkg.dir, oldest[0])} is older than the sources`
  return undefined
}

/**
 * Builds one package's JavaScript into a folder of its own, then installs it in
 * `dist/`: a file whose bytes changed, or a new one, by an atomic rename (chunks before the entries that
 * import them); an unchanged one only touched; then what the build did not write is removed. tsup writes
 * files in place, truncating each first: a `ptc` process starting while another test file's build (the
 * consumer test's declarations build) rewrote an unchanged `dist/` read a half-written chunk and exited 1
 * with nothing on stdout, once in a few suite runs.
 */
function buildPackage(pkg: WorkspacePackage, root: string): void {
  const dist = join(pkg.dir, 'dist')
  const staging = join(pkg.dir, `dist.building-${process.pid}`)
  rmSync(staging, { recursive: true, force: true })
  try {
    execFileSync(join(root, 'node_modules/.bin/tsup'), ['--silent', '--out-dir', staging], {
      cwd: pkg.dir,
      stdio: ['ignore', 'ignore', 'pipe'],
    })
    installBuild(staging, dist)
  } finally {
    rmSync(staging, { recursive: true, force: true })
  }
}

/** Moves a staged build into `dist` (see `buildPackage`). */
function installBuild(staging: string, dist: string): void {
  const staged = [...filesOf(staging).keys()].map((path) => relative(staging, path))
  // Chunks first: an entry renamed in may import them at once.
  staged.sort((a, b) => Number(!basename(a).startsWith('chunk-')) - Number(!basename(b).startsWith('chunk-')))
  const now = new Date()
  for (const file of staged) {
    const from = join(staging, file)
    const to = join(dist, file)
    if (existsSync(to) && readFileSync(to).equals(readFileSync(from))) utimesSync(to, now, now)
    else {
      mkdirSync(dirname(to), { recursive: true })
      renameSync(from, to)
    }
  }
  const written = new Set(staged.map((file) => join(dist, file)))
  for (const path of filesOf(dist).keys()) if (!written.has(path)) rmSync(path, { force: true })
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
  /**
   * Also build the `.d.ts` files the `exports` map names (what a packed package needs); default
   * false. A JavaScript-only build later removes them again.
   */
  readonly declarations?: boolean
}

export interface BuildJsReport {
  /** Folders rebuilt (relative to the root). */
  readonly built: readonly string[]
  /** Folders whose build failed and was tolerated. */
  readonly failed: readonly string[]
}

const sleep = (ms: number): void => void Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms)

/**
 * A lock held by a live process is waited for; one whose process is gone, or untouched for 10 minutes, is
 * taken over.
 */
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

/** Locks this process holds now, by path, with how many callers hold each. */
const held = new Map<string, number>()

/**
 * Runs `fn` holding the workspace's build lock (`node_modules/.cache/ptc-build-js.lock`), which other
 * processes' builds wait for. Re-entrant within this process: a build inside `fn` does not wait for itself.
 */
export function withBuildLock<T>(root: string, fn: (lock: string) => T): T {
  const lock = join(root, 'node_modules/.cache/ptc-build-js.lock')
  const count = held.get(lock) ?? 0
  if (count === 0) acquireLock(lock)
  held.set(lock, count + 1)
  try {
    return fn(lock)
  } finally {
    held.set(lock, (held.get(lock) ?? 1) - 1)
    if (held.get(lock) === 0) {
      held.delete(lock)
      rmSync(lock, { recursive: true, force: true })
    }
  }
}

/**
 * Builds what is stale, dependencies first (JavaScript; with `declarations` then the `.d.ts` files, see
 * `buildDeclarations`). A package found current is not waited for; one that is stale is built under the
 * build lock, held for that package only and its staleness checked again once held: a test that needs the
 * CLI's JavaScript does not wait for the consumer test's declarations, once the JavaScript is there.
 */
export function buildJs(options: BuildJsOptions = {}): BuildJsReport {
  const root = options.root ?? ROOT
  const log = options.log ?? ((line: string) => void process.stderr.write(`${line}\n`))
  const optional = new Set(options.optional ?? [])
  const order = buildOrder(options.packages ?? ['@ptc/cli'], root).filter((pkg) =>
    existsSync(join(pkg.dir, 'tsup.config.ts')),
  )
  const last = order.at(-1)
  const built: string[] = []
  const failed: string[] = []
  for (const pkg of order) {
    const folder = relative(root, pkg.dir)
    if (staleReason(pkg) === undefined) continue
    withBuildLock(root, (lock) => {
      const reason = staleReason(pkg)
      if (reason === undefined) return // built by another process while this one waited
      utimesSync(lock, new Date(), new Date())
      const started = performance.now()
      try {
        buildPackage(pkg, root)
      } catch (error) {
        const detail = String((error as { stderr?: unknown }).stderr ?? (error as Error).message)
          .trim()
          .split('\n')[0]
        if (optional.has(pkg.name)) {
          log(`build-js: ${folder} does not build (${detail}); skipped`)
          failed.push(folder)
          return
        }
        if (options.keepPreviousOnFailure === true && pkg !== last && existsSync(join(pkg.dir, 'dist/index.js'))) {
          log(`build-js: ${folder} does not build now; using its previous dist/ (${detail})`)
          failed.push(folder)
          return
        }
        throw error
      }
      built.push(folder)
      log(`build-js: ${folder} (${reason}): built in ${((performance.now() - started) / 1000).toFixed(1)} s`)
    })
  }
  if (options.declarations === true) {
    const skipped = new Set(failed)
    buildDeclarations(
      order.filter((pkg) => !skipped.has(relative(root, pkg.dir))),
      root,
      log,
    )
  }
  return { built, failed }
}

/**
 * The `.d.ts` files of those of `packages` whose declarations are stale: one TypeScript program emits every
 * package's, and the stale packages' are bundled (`emitDeclarations`, no lock held: it writes to a folder of
 * its own); then each package receives its own under the build lock, once its JavaScript is checked again
 * (a JavaScript build removes the declarations, so one that ran meanwhile is redone first). A source changed
 * while the program ran leaves the package stale: `scripts/pack.ts` checks once more under the lock.
 */
function buildDeclarations(packages: readonly WorkspacePackage[], root: string, log: (line: string) => void): void {
  const stale = packages.filter((pkg) => staleReason(pkg, true) !== undefined)
  if (stale.length === 0) return
  const started = performance.now()
  const emitted = emitDeclarations(stale, root)
  log(`build-dts: declarations emitted and bundled in ${((performance.now() - started) / 1000).toFixed(1)} s`)
  try {
    for (const pkg of stale) {
      withBuildLock(root, (lock) => {
        utimesSync(lock, new Date(), new Date())
        if (staleReason(pkg) !== undefined) buildPackage(pkg, root)
        const reason = staleReason(pkg, true)
        if (reason === undefined) return
        const count = installDeclarations(pkg, emitted, root)
        log(`build-dts: ${relative(root, pkg.dir)} (${reason}): ${count} files`)
      })
    }
  } finally {
    rmSync(emitted.folder, { recursive: true, force: true })
  }
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  const args = process.argv.slice(2)
  const declarations = args.includes('--declarations')
  const names = args.filter((arg) => arg !== '--declarations')
  try {
    buildJs({
      packages: names.length > 0 ? names : declarations ? workspacePackageNames() : ['@ptc/cli'],
      declarations,
    })
  } catch (error) {
    const stderr = (error as { stderr?: unknown }).stderr
    process.stderr.write(`build-js: ${stderr === undefined ? String(error) : String(stderr)}\n`)
    process.exitCode = 1
  }
}
