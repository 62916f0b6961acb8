import { createRequire } from 'node:module'
import { pathToFileURL } from 'node:url'
import { Worker, type WorkerOptions } from 'node:worker_threads'

const isInputType = (arg: string): boolean => arg === '--input-type' || arg.startsWith('--input-type=')

/**
 * Starts a worker thread of the sandbox. It inherits the process's `execArgv` as Node does by default, except
 * when that holds `--input-type`, which applies only to the process's own `--eval` text (a worker inheriting it
 * fails to start: "--input-type can only be used with string input via --eval"). Then the worker gets the
 * process's options without it; options a worker refuses when they are given explicitly (process-wide ones
 * such as `--no-node-snapshot`) are dropped, as inheriting them would have ignored them. So a host started as
 * `node --input-type=module -e …` can use worker isolation.
 */
export function startWorker(entry: string | URL, options: WorkerOptions): Worker {
  if (!process.execArgv.some(isInputType)) return new Worker(entry, options)
  const execArgv: string[] = []
  for (let i = 0; i < process.execArgv.length; i++) {
    const arg = process.execArgv[i] as string
    if (arg === '--input-type') i++
    else if (!isInputType(arg)) execArgv.push(arg)
  }
  try {
    return new Worker(entry, { ...options, execArgv })
  } catch (error) {
    if ((error as { code?: unknown }).code !== 'ERR_WORKER_INVALID_EXEC_ARGV') throw error
    // "Initiated Worker with invalid execArgv flags: --a, --b"
    const refused = new Set(String((error as Error).message).replace(/^[^:]*:\s*/, '').split(/,\s*/))
    return new Worker(entry, { ...options, execArgv: execArgv.filter((arg) => !refused.has(arg) && !refused.has(arg.split('=')[0] as string)) })
  }
}

/**
 * A worker running the TypeScript module `entry`, for a package run from its sources (under vitest, or
 * `--conditions=@ptc/source` with tsx): an `eval` worker registers tsx's ESM loader and imports it, with
 * `--conditions=@ptc/source` so workspace packages resolve to their sources (a worker does not inherit the
 * loader its parent runs under). Built packages start their `.js` entries with `startWorker`.
 */
export function spawnSourceWorker(entry: URL, workerData: unknown): Worker {
  // `require.resolve` finds the CommonJS build of `tsx/esm/api`; its ESM build sits beside it.
  const tsx = pathToFileURL(createRequire(import.meta.url).resolve('tsx/esm/api').replace(/\.cjs$/, '.mjs')).href
  const boot = `import(${JSON.stringify(tsx)}).then((m) => { m.register(); return import(${JSON.stringify(entry.href)}) })`
  return new Worker(boot, { eval: true, workerData, execArgv: ['--conditions=@ptc/source'] })
}
