/**
 * Builds the `ptc` binary the way a user gets it (tsup, `dist/`), plus the
 * workspace packages it imports, each only when its `dist` is missing or older
 * than its sources. Test files share one build through a lock folder.
 */
import { execFileSync } from 'node:child_process'
import { existsSync, mkdirSync, readdirSync, rmSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

export const ROOT = fileURLToPath(new URL('../..', import.meta.url))
export const BIN = join(ROOT, 'packages/cli/dist/bin.js')

/** In dependency order; the CLI last. `ptc serve` loads @ptc/mcp on demand: its build may fail (then serve says it is unavailable). */
const PACKAGES = ['packages/tools', 'sandbox/runtime', 'bindings', 'packages/ptc', 'sandbox/quickjs', 'sandbox/isolated-vm', 'packages/mcp', 'packages/cli']
const OPTIONAL = new Set(['packages/mcp'])

function newestSource(dir: string): number {
  let newest = 0
  const stack = [join(dir, 'src'), join(dir, 'tsup.config.ts'), join(dir, 'package.json')]
  while (stack.length > 0) {
    const path = stack.pop() as string
    if (!existsSync(path)) continue
    const info = statSync(path)
    if (info.isDirectory()) for (const entry of readdirSync(path)) stack.push(join(path, entry))
    else if (!path.endsWith('.test.ts') && !path.endsWith('.test-d.ts')) newest = Math.max(newest, info.mtimeMs)
  }
  return newest
}

function isStale(dir: string): boolean {
  const built = join(dir, 'dist/index.js')
  return !existsSync(built) || statSync(built).mtimeMs < newestSource(dir)
}

const sleep = (ms: number): void => void Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms)

/** Builds what is stale (JavaScript only: declarations are not needed to run the binary). */
export function buildCli(): void {
  const lock = join(ROOT, 'node_modules/.cache/ptc-cli-test-build.lock')
  mkdirSync(join(lock, '..'), { recursive: true })
  for (let waited = 0; ; waited += 200) {
    try {
      mkdirSync(lock)
      break
    } catch {
      // A lock older than two minutes was left by a killed run.
      const age = Date.now() - (statSync(lock, { throwIfNoEntry: false })?.mtimeMs ?? Date.now())
      if (age > 120_000) rmSync(lock, { recursive: true, force: true })
      sleep(200)
    }
  }
  try {
    for (const pkg of PACKAGES) {
      const dir = join(ROOT, pkg)
      if (!existsSync(join(dir, 'tsup.config.ts')) || !isStale(dir)) continue
      try {
        execFileSync(join(ROOT, 'node_modules/.bin/tsup'), ['--no-dts', '--no-clean', '--silent'], { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] })
      } catch (error) {
        if (OPTIONAL.has(pkg)) continue
        // A dependency mid-edit (sources that do not build yet) keeps its last build; the CLI itself must build.
        if (pkg !== 'packages/cli' && existsSync(join(dir, 'dist/index.js'))) {
          process.stderr.write(`test/cli: ${pkg} does not build now; using its previous dist/ (${String((error as Error).message).split('\n')[0]})\n`)
          continue
        }
        throw error
      }
    }
  } finally {
    rmSync(lock, { recursive: true, force: true })
  }
}
