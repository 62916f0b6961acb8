/**
 * Runs every benchmark script under bench/ in its own process (so one backend's
 * warm state cannot flatter another's) and prints their tables.
 *
 *   npx --yes pnpm@10.34.9 bench [--quick] [--json]
 *
 * `--quick` and `--json` are passed on to every script (`ptc bench` reads the `--json` lines).
 */
import { spawnSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import { fileURLToPath } from 'node:url'

const root = fileURLToPath(new URL('..', import.meta.url))
const scripts = [
  'bench/pipeline/pipeline.ts',
  'bench/ptc/ptc.ts',
  'bench/sandbox/quickjs.ts',
  'bench/sandbox/isolated-vm.ts',
]
const passed = process.argv.slice(2).filter((arg) => arg === '--quick' || arg === '--json')
let failed = false
for (const script of scripts) {
  if (!existsSync(new URL(script, new URL('..', import.meta.url)))) continue
  console.log(`\n## ${script}\n`)
  const run = spawnSync(
    process.execPath,
    ['--no-node-snapshot', '--conditions=@ptc/source', '--import', 'tsx', script, ...passed],
    { cwd: root, stdio: 'inherit' },
  )
  if (run.status !== 0) failed = true
}
process.exitCode = failed ? 1 : 0
