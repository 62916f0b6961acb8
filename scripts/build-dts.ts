/**
 * The `.d.ts` files of the workspace packages. One TypeScript program emits the declarations of every
 * package's sources (`tsconfig.dts.json`: declarations only, the workspace packages resolved to their
 * sources through the `@ptc/source` condition), then rollup-plugin-dts bundles each package's entries
 * from those files, as tsup's `dts` did: the declarations a package's `exports` map names, each holding
 * what its entry exports (shared parts in chunks), other packages left as imports. tsup built them
 * package by package, each in a TypeScript program of its own: nine programs, 43-60 s on a quiet machine
 * and about two minutes beside the test suite on CI's 2 cores, where one program and the bundling take
 * 10-20 s.
 *
 *   node --import tsx scripts/build-dts.ts <request.json>   (the bundling step, run by `emitDeclarations`)
 *
 * `pnpm build` runs it after tsup (`scripts/build-js.ts --declarations`), and so does `scripts/pack.ts`.
 * The installed files carry the time the TypeScript program started as their modification time, so that
 * a source changed while it ran leaves them stale (see `staleReason` in build-js.ts).
 */
import { execFileSync } from 'node:child_process'
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  renameSync,
  rmSync,
  statSync,
  utimesSync,
  writeFileSync,
} from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join, posix, relative } from 'node:path'
import { fileURLToPath } from 'node:url'

const ROOT = fileURLToPath(new URL('..', import.meta.url))

/** What the declarations of a workspace package are built from (build-js.ts's `WorkspacePackage`). */
export interface DeclaredPackage {
  /** Absolute folder. */
  readonly dir: string
  /** `dist/…` declaration files the `exports` map points at (`./dist/index.d.ts`, …). */
  readonly typeTargets: readonly string[]
  /** The source of each, where its export names one (`./src/sessions/index.ts`); else found by its name. */
  readonly typeSources?: Readonly<Record<string, string>>
}

/** One emission of declarations (`emitDeclarations`); the caller removes `folder` when done. */
export interface EmittedDeclarations {
  /** Each package's bundled declarations, in `<folder>/<package folder, relative to the root>/`. */
  readonly folder: string
  /** When the TypeScript program started: the modification time the installed files get. */
  readonly startedAt: Date
}

/** What the bundling step (this file run as a script) is asked. */
interface BundleRequest {
  /** Per package: its emitted sources (where its entries are), the folder its bundle goes to, its entries. */
  readonly packages: readonly {
    readonly source: string
    readonly out: string
    readonly entries: Readonly<Record<string, string>>
  }[]
}

/**
 * Emits every package's declarations and bundles those of `packages`. Throws with tsc's (or rollup's)
 * diagnostics when they do not build.
 */
export function emitDeclarations(packages: readonly DeclaredPackage[], root: string = ROOT): EmittedDeclarations {
  // Not under node_modules/: rollup-plugin-dts leaves files there as imports, not bundled.
  const folder = mkdtempSync(join(tmpdir(), 'ptc-dts-'))
  const program = join(folder, 'program')
  const startedAt = new Date()
  try {
    run(
      join(root, 'node_modules/.bin/tsc'),
      ['-p', join(root, 'tsconfig.dts.json'), '--outDir', program],
      root,
      'tsc -p tsconfig.dts.json',
    )
    const request: BundleRequest = {
      packages: packages.map((pkg) => ({
        source: join(program, relative(root, pkg.dir), 'src'),
        out: join(folder, relative(root, pkg.dir)),
        entries: entriesOf(pkg, join(program, relative(root, pkg.dir), 'src'), root),
      })),
    }
    const file = join(folder, 'request.json')
    writeFileSync(file, JSON.stringify(request))
    run(process.execPath, ['--import', 'tsx', fileURLToPath(import.meta.url), file], root, 'rollup-plugin-dts')
  } catch (error) {
    rmSync(folder, { recursive: true, force: true })
    throw error
  }
  return { folder, startedAt }
}

function run(command: string, args: readonly string[], cwd: string, what: string): void {
  try {
    execFileSync(command, args, { cwd, stdio: ['ignore', 'pipe', 'pipe'] })
  } catch (error) {
    const output =
      `${String((error as { stdout?: unknown }).stdout ?? '')}${String((error as { stderr?: unknown }).stderr ?? '')}`.trim()
    throw Object.assign(new Error(`the declarations do not build (${what}):\n${output || (error as Error).message}`), {
      stderr: output,
    })
  }
}

/**
 * Rollup entry names (a type target's path in `dist/` without `.d.ts`) and the emitted declaration of
 * each: that of the source its export names (`@ptc/source`), else `src/<name>.d.ts`, or `src/<name>/index.d.ts` for
 * an entry named apart from its source (`shapes: 'src/shapes/index.ts'`).
 */
function entriesOf(pkg: DeclaredPackage, source: string, root: string): Record<string, string> {
  const entries: Record<string, string> = {}
  for (const target of pkg.typeTargets) {
    const name = posix
      .normalize(target)
      .replace(/^dist\//, '')
      .replace(/\.d\.ts$/, '')
    const named = pkg.typeSources?.[target]
    const fromExport = named === undefined ? [] : [join(source, posix.relative('src', named).replace(/\.ts$/, '.d.ts'))]
    const file = [...fromExport, join(source, `${name}.d.ts`), join(source, name, 'index.d.ts')].find((path) =>
      existsSync(path),
    )
    if (file === undefined)
      throw new Error(
        `no declarations were emitted for ${relative(root, join(pkg.dir, target))} (from src/${name}.ts or ` +
          `src/${name}/index.ts)`,
      )
    entries[name] = file
  }
  return entries
}

/**
 * Installs `pkg`'s bundled declarations into its `dist/`: a changed or new file by an atomic rename, an
 * unchanged one left; `.d.ts` files of `dist/` that are not among them are removed. Returns their count.
 */
export function installDeclarations(pkg: DeclaredPackage, emitted: EmittedDeclarations, root: string = ROOT): number {
  const built = join(emitted.folder, relative(root, pkg.dir))
  const dist = join(pkg.dir, 'dist')
  const files = declarationFiles(built).map((path) => relative(built, path))
  for (const file of files) {
    const from = join(built, file)
    const to = join(dist, file)
    if (!(existsSync(to) && readFileSync(to).equals(readFileSync(from)))) {
      mkdirSync(dirname(to), { recursive: true })
      // Copied beside the target, then renamed over it: a reader never sees half a file.
      const staged = `${to}.${process.pid}.tmp`
      copyFileSync(from, staged)
      renameSync(staged, to)
    }
    utimesSync(to, emitted.startedAt, emitted.startedAt)
  }
  const kept = new Set(files.map((file) => join(dist, file)))
  for (const path of declarationFiles(dist)) if (!kept.has(path)) rmSync(path, { force: true })
  return files.length
}

function declarationFiles(dir: string): string[] {
  return [...filesOf(dir).keys()].filter((path) => path.endsWith('.d.ts'))
}

/** Every file under `dir` with its modification time. */
export function filesOf(dir: string): Map<string, number> {
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

/** The bundling step: rollup-plugin-dts over the emitted files, a package at a time. */
async function bundle(request: BundleRequest): Promise<void> {
  const { rollup } = await import('rollup')
  const { dts } = await import('rollup-plugin-dts')
  for (const pkg of request.packages) {
    const build = await rollup({
      input: pkg.entries,
      plugins: [dts()],
      // Only the package's own files are bundled: other packages (workspace or not) stay imports.
      external: (id, importer) => importer !== undefined && !id.startsWith('.') && !id.startsWith(pkg.source),
      onwarn: (warning) => {
        throw new Error(`${pkg.source}: ${warning.message}`)
      },
    })
    await build.write({
      dir: pkg.out,
      format: 'es',
      entryFileNames: '[name].d.ts',
      chunkFileNames: (chunk) => `${chunk.name.replace(/\.d$/, '')}-[hash].d.ts`,
    })
    await build.close()
  }
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  const file = process.argv[2]
  if (file === undefined) {
    process.stderr.write('usage: node --import tsx scripts/build-dts.ts <request.json> (see emitDeclarations)\n')
    process.exitCode = 2
  } else await bundle(JSON.parse(readFileSync(file, 'utf8')) as BundleRequest)
}
