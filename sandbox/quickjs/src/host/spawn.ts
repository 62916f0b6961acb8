import type { Worker } from 'node:worker_threads'
import { spawnSourceWorker, startWorker } from '@ptc/sandbox/backend'

/**
 * Starts an engine worker. Built (`dist/`): `worker-entry.js` beside this bundle. From source (this
 * module's URL ends in `.ts`, as under vitest): `../engine/worker-entry.ts` through `spawnSourceWorker`.
 */
export function spawnEngineWorker(workerData: unknown): Worker {
  const here = import.meta.url
  if (!here.endsWith('.ts')) return startWorker(new URL('./worker-entry.js', here), { workerData })
  return spawnSourceWorker(new URL('../engine/worker-entry.ts', here), workerData)
}
