import { readdirSync } from 'node:fs'
import { setPriority } from 'node:os'

/** The nice value of a worker whose run is past `LONG_RUN_CPU_MS`: the OS gives fresh runs' threads the cores first. */
export const LONG_RUN_NICE = 10

/** This process's thread ids (Linux `/proc`); undefined where they cannot be read. */
function threadIds(): Set<string> | undefined {
  try {
    return new Set(readdirSync('/proc/self/task'))
  } catch {
    return undefined
  }
}

/**
 * Calls `start` (which starts one thread: `new Worker()` creates its thread before it returns) and returns what it
 * returned with the OS id of that thread: the one thread that appeared meanwhile, or undefined when none or several
 * did (another thread started at the same moment) or `/proc` cannot be read.
 */
export function withThreadId<T>(start: () => T): { value: T; tid: number | undefined } {
  const before = threadIds()
  const value = start()
  const after = before === undefined ? undefined : threadIds()
  if (before === undefined || after === undefined) return { value, tid: undefined }
  const added = [...after].filter((id) => !before.has(id))
  return { value, tid: added.length === 1 ? Number(added[0]) : undefined }
}

/**
 * Sets the nice value of thread `tid` (Linux: a thread's own priority). False when the OS refused: any process may
 * lower a thread's priority, only a privileged one may raise it back.
 */
export function setThreadNice(tid: number, nice: number): boolean {
  try {
    setPriority(tid, nice)
    return true
  } catch {
    return false
  }
}
