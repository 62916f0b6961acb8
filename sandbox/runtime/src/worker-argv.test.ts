import { spawnSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { expect, test } from 'vitest'

const worker = fileURLToPath(new URL('./worker-argv.ts', import.meta.url))

interface Seen {
  /** The worker's `process.execArgv`. */
  argv: string[]
  /** The worker's `NODE_OPTIONS`. */
  nodeOptions: string | null
}

/**
 * A process started with `--import tsx` (to load the module under test), `flags` and `NODE_OPTIONS` that starts a
 * worker through startWorker and prints what the worker saw.
 */
function startFrom(
  flags: readonly string[],
  nodeOptions = '',
): { status: number | null; seen: Seen | undefined; stderr: string } {
  const script = [
    `const { startWorker } = await import(${JSON.stringify(worker)})`,
    'const w = startWorker(\'const { parentPort } = require("node:worker_threads"); parentPort.postMessage({ argv: process.execArgv, nodeOptions: process.env.NODE_OPTIONS ?? null })\', { eval: true })',
    "w.on('message', (seen) => console.log(JSON.stringify(seen)))",
  ].join('\n')
  const child = spawnSync(process.execPath, ['--import', 'tsx', ...flags, '-e', script], {
    encoding: 'utf8',
    timeout: 20_000,
    env: { ...process.env, NODE_OPTIONS: nodeOptions },
  })
  const out = child.stdout.trim()
  if (out === '') return { status: child.status, seen: undefined, stderr: child.stderr }
  const seen = JSON.parse(out) as Seen
  // The process's execArgv ends with its own -e and the script: the options before them are what the test compares.
  const e = seen.argv.indexOf('-e')
  return {
    status: child.status,
    seen: { ...seen, argv: e === -1 ? seen.argv : seen.argv.slice(0, e) },
    stderr: child.stderr,
  }
}

test('a worker started from a process run with --input-type starts, without it; a flag a worker refuses is dropped', () => {
  const run = startFrom(['--input-type=module', '--no-node-snapshot', '--max-semi-space-size=16'])
  expect(run.status, run.stderr).toBe(0)
  expect(run.seen?.argv.some((a) => a.startsWith('--input-type'))).toBe(false)
  expect(run.seen?.argv).not.toContain('--no-node-snapshot')
})

test('--input-type given as two arguments is dropped too; the other options reach the worker', () => {
  const run = startFrom(['--input-type', 'module', '--no-warnings'])
  expect(run.status, run.stderr).toBe(0)
  expect(run.seen?.argv).toEqual(expect.arrayContaining(['--no-warnings']))
})

test("a TypeScript loader's preloads do not reach the worker, in either form, nor from NODE_OPTIONS; other preloads do", () => {
  // What tsx's own command passes: absolute paths inside its package.
  const tsxDir = fileURLToPath(new URL('.', import.meta.resolve('tsx')))
  const other = 'data:text/javascript,globalThis.preloaded=1'
  const run = startFrom([
    '--input-type=module',
    '--import=tsx',
    '--require',
    `${tsxDir}preflight.cjs`,
    '--import',
    other,
    '--no-warnings',
  ])
  expect(run.status, run.stderr).toBe(0)
  expect(run.seen?.argv).toEqual(['--import', other, '--no-warnings'])
  // Node reads a worker's NODE_OPTIONS again: the loader goes, the rest stays, quoted as Node splits it.
  const fromEnv = startFrom([], '--import tsx --no-warnings --conditions "a \\"b\\" c" --import=tsx/esm')
  expect(fromEnv.status, fromEnv.stderr).toBe(0)
  expect(fromEnv.seen?.nodeOptions).toBe('--no-warnings --conditions "a \\"b\\" c"')
  // Without --input-type or a loader, the worker inherits the process's options as Node does.
  const plain = startFrom(['--no-warnings'], '--no-deprecation')
  expect(plain.seen).toEqual({ argv: ['--no-warnings'], nodeOptions: '--no-deprecation' })
})
