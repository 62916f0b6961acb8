import { spawnSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { expect, test } from 'vitest'

const worker = fileURLToPath(new URL('./worker-argv.ts', import.meta.url))

/** A process started with `flags` that starts a worker through startWorker and prints what the worker saw. */
function startFrom(flags: readonly string[]): { status: number | null; stdout: string; stderr: string } {
  const script = [
    `const { startWorker } = await import(${JSON.stringify(worker)})`,
    "const w = startWorker('require(\"node:worker_threads\").parentPort.postMessage(process.execArgv)', { eval: true })",
    "w.on('message', (argv) => console.log(JSON.stringify(argv)))",
  ].join('\n')
  const child = spawnSync(process.execPath, ['--import', 'tsx', ...flags, '-e', script], { encoding: 'utf8', timeout: 20_000, env: { ...process.env, NODE_OPTIONS: '' } })
  return { status: child.status, stdout: child.stdout.trim(), stderr: child.stderr }
}

test('a worker started from a process run with --input-type starts, without it; a flag a worker refuses is dropped', () => {
  const run = startFrom(['--input-type=module', '--no-node-snapshot', '--max-semi-space-size=16'])
  expect(run.status, run.stderr).toBe(0)
  const argv = JSON.parse(run.stdout) as string[]
  expect(argv.some((a) => a.startsWith('--input-type'))).toBe(false)
  expect(argv).not.toContain('--no-node-snapshot')
})

test('--input-type given as two arguments is dropped too; the other options reach the worker', () => {
  const run = startFrom(['--input-type', 'module', '--no-warnings'])
  expect(run.status, run.stderr).toBe(0)
  expect(JSON.parse(run.stdout)).toEqual(expect.arrayContaining(['--no-warnings']))
})
