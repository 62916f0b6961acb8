/**
 * Packs every workspace package as it would be published: `.d.ts` files built
 * beside the JavaScript (`build-js.ts` with declarations, only what is stale),
 * then one recursive `pnpm pack` of them all, which writes the versions of
 * `workspace:*` dependencies and applies `publishConfig` (the exports without
 * the repository's `@ptc/source` condition).
 *
 *   node --import tsx scripts/pack.ts [OUT]      (default: .packs/ in the repository)
 *
 * Until the packages are on the npm registry, a project installs them from these
 * tarballs: `npm install OUT/*.tgz` (README, "Quick start in your own project").
 */
import { execFileSync } from 'node:child_process'
import { existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs'
import { join, relative, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { buildJs, buildOrder, ROOT, withBuildLock, workspacePackageNames } from './build-js.js'

export interface PackedPackage {
  readonly name: string
  readonly version: string
  /** Absolute path of the tarball. */
  readonly tarball: string
}

export interface PackOptions {
  /** The folder the tarballs are written to; emptied of earlier tarballs first. */
  readonly out: string
  readonly root?: string
  readonly log?: (line: string) => void
}

/** Builds (JavaScript and declarations) and packs every workspace package into `out`, dependencies first. */
export function packAll(options: PackOptions): PackedPackage[] {
  const root = options.root ?? ROOT
  const log = options.log ?? ((line: string) => void process.stderr.write(`${line}\n`))
  const names = workspacePackageNames(root)
  // The JavaScript of every package first, then the declarations, each package under the build lock while it
  // builds: a concurrent JavaScript-only build (a test, a demo) finds the JavaScript current and does not wait
  // for the declarations. The lock is then held from a last check to the packing: a JavaScript-only build of a
  // package whose sources changed meanwhile removes its declarations, which are then built again.
  buildJs({ packages: names, root, log })
  buildJs({ packages: names, declarations: true, root, log })
  return withBuildLock(root, () => {
    buildJs({ packages: names, declarations: true, root, log })
    rmSync(options.out, { recursive: true, force: true })
    mkdirSync(options.out, { recursive: true })
    const [command, ...prefix] = pnpmCommand(root)
    // One pnpm for every package (`-r pack`): nine `pnpm pack` processes took 7 s, this takes 1.
    const filters = names.flatMap((name) => ['--filter', name])
    execFileSync(command as string, [...prefix, '-r', ...filters, 'pack', '--pack-destination', options.out], {
      cwd: root,
      stdio: ['ignore', 'ignore', 'pipe'],
    })
    const packed: PackedPackage[] = []
    for (const pkg of buildOrder(names, root)) {
      const manifest = JSON.parse(readFileSync(join(pkg.dir, 'package.json'), 'utf8')) as { version: string }
      const tarball = join(options.out, `${pkg.name.replace(/^@/, '').replace('/', '-')}-${manifest.version}.tgz`)
      if (!existsSync(tarball)) throw new Error(`pnpm pack wrote no ${tarball} for ${relative(root, pkg.dir)}`)
      packed.push({ name: pkg.name, version: manifest.version, tarball })
      log(`pack: ${relative(root, pkg.dir)} -> ${relative(process.cwd(), tarball)}`)
    }
    return packed
  })
}

/**
 * The pnpm of this workspace: the one running us (`pnpm pack:all`, `pnpm test`), else the version
 * `packageManager` pins, through npx.
 */
export function pnpmCommand(root: string): string[] {
  const running = process.env['npm_execpath']
  if (running !== undefined && /pnpm\.c?js$/.test(running)) return [process.execPath, running]
  const pinned = (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { packageManager: string })
    .packageManager
  return ['npx', '--yes', pinned]
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  const out = resolve(process.argv[2] ?? join(ROOT, '.packs'))
  try {
    const packed = packAll({ out })
    process.stdout.write(`${packed.map((p) => p.tarball).join('\n')}\n`)
  } catch (error) {
    const stderr = (error as { stderr?: unknown }).stderr
    process.stderr.write(`pack: ${stderr === undefined ? String(error) : String(stderr)}\n`)
    process.exitCode = 1
  }
}
