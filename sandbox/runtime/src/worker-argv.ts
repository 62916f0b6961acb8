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
