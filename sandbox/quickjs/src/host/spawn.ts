import { createRequire } from 'node:module'
import { pathToFileURL } from 'node:url'
import { Worker } from 'node:worker_threads'
import { startWorker } from '@ptc/sandbox/backend'

/**
 * Starts an engine worker. Built (`dist/`): `worker-entry.js` beside this bundle. From source (this
 * module's URL ends in `.ts`, as under vitest): `../engine/worker-entry.ts` through `spawnSourceWorker`.
 */
export function spawnEngineWorker(workerData: unknown): Worker {
  const here = import.meta.url
  if (!here.endsWith('.ts')) return startWorker(new URL('./worker-entry.js', here), { workerData })
  return spawnSourceWorker(new URL('../engine/worker-entry.ts', here), workerData)
}

/**
 * A worker running the TypeScript module `entry`: an `eval` worker registers tsx's ESM loader and
 * imports it, with `--conditions=@ptc/source` so workspace packages resolve to their sources (a worker
 * does not inherit the loader its parent runs under).
 */
export function spawnSourceWorker(entry: URL, workerData: unknown): Worker {
  // `require.resolve` finds the CommonJS build of `tsx/esm/api`; its ESM build sits beside it.
  const tsx = pathToFileURL(createRequire(import.meta.url).resolve('tsx/esm/api').replace(/\.cjs$/, '.mjs')).href
  const boot = `import(${JSON.stringify(tsx)}).then((m) => { m.register(); return import(${JSON.stringify(entry.href)}) })`
  return new Worker(boot, { eval: true, workerData, execArgv: ['--conditions=@ptc/source'] })
}
