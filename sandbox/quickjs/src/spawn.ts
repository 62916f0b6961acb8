import { createRequire } from 'node:module'
import { pathToFileURL } from 'node:url'
import { Worker } from 'node:worker_threads'

/**
 * Starts an engine worker. Built (`dist/`): `worker-entry.js` beside this module. From source (this
 * module's URL ends in `.ts`, as under vitest): an `eval` worker registers tsx's ESM loader and
 * imports `worker-entry.ts`, with `--conditions=@ptc/source` so `@ptc/sandbox` resolves to source.
 */
export function spawnEngineWorker(workerData: unknown): Worker {
  const here = import.meta.url
  if (!here.endsWith('.ts')) return new Worker(new URL('./worker-entry.js', here), { workerData })
  const entry = new URL('./worker-entry.ts', here).href
  // `require.resolve` finds the CommonJS build of `tsx/esm/api`; its ESM build sits beside it.
  const tsx = pathToFileURL(createRequire(here).resolve('tsx/esm/api').replace(/\.cjs$/, '.mjs')).href
  const boot = `import(${JSON.stringify(tsx)}).then((m) => { m.register(); return import(${JSON.stringify(entry)}) })`
  return new Worker(boot, { eval: true, workerData, execArgv: ['--conditions=@ptc/source'] })
}
