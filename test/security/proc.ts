/**
 * CPU time and resident memory of this process and every process below it, from /proc (Linux). A
 * guest that keeps running after its run answered shows up here: as a thread of this process (an
 * isolate thread, a worker) or as a child process (a contained isolate), whichever the backend uses;
 * so does the memory of engine processes, which the host's own RSS does not include.
 */
import { readdirSync, readFileSync } from 'node:fs'

/** Clock ticks per second of the `stat` times (USER_HZ, 100 on every Linux ABI Node supports). */
const TICKS_PER_SECOND = 100

/** utime + stime + cutime + cstime of one process, in ms; 0 when it is gone. */
function ownCpuMs(pid: number): number {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8')
    // The command name (field 2) may hold spaces and parentheses: the fields after it start at the last ')'.
    const fields = text.slice(text.lastIndexOf(')') + 2).split(' ')
    const ticks = [11, 12, 13, 14].reduce((sum, i) => sum + Number(fields[i] ?? 0), 0)
    return (ticks * 1000) / TICKS_PER_SECOND
  } catch {
    return 0
  }
}

/** Direct children of `pid`, from every thread's `children` file. */
export function childPids(pid: number): number[] {
  const out = new Set<number>()
  let tasks: string[]
  try {
    tasks = readdirSync(`/proc/${pid}/task`)
  } catch {
    return []
  }
  for (const task of tasks) {
    try {
      for (const child of readFileSync(`/proc/${pid}/task/${task}/children`, 'utf8').split(' ')) {
        if (child.trim() !== '') out.add(Number(child))
      }
    } catch {
      // the thread ended while we read
    }
  }
  return [...out]
}

/**
 * CPU ms of `pid` and all its descendants, reaped children included (a child that ends moves its
 * time into the parent's cutime/cstime, so the total never drops when a contained isolate is killed).
 */
export function treeCpuMs(pid: number = process.pid): number {
  return processTree(pid).reduce((sum, p) => sum + ownCpuMs(p), 0)
}

/** Resident set of one process in bytes (VmRSS); 0 when it is gone. */
function ownRssBytes(pid: number): number {
  try {
    const match = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))
    return match === null ? 0 : Number(match[1]) * 1024
  } catch {
    return 0
  }
}

/** Every process at and below `pid`. */
export function processTree(pid: number): number[] {
  const out: number[] = []
  const stack = [pid]
  while (stack.length > 0) {
    const p = stack.pop() as number
    if (out.includes(p)) continue
    out.push(p)
    stack.push(...childPids(p))
  }
  return out
}

/** RSS of `pid` and all its live descendants, in bytes (shared pages count once per process). */
export function treeRssBytes(pid: number = process.pid): number {
  return processTree(pid).reduce((sum, p) => sum + ownRssBytes(p), 0)
}

/** Whether /proc can be read here (the CPU checks need it). */
export const procAvailable = ((): boolean => {
  try {
    readFileSync(`/proc/${process.pid}/stat`, 'utf8')
    return true
  } catch {
    return false
  }
})()

export interface CpuWindow {
  /** When the window began, ms after the call to `cpuSettles`. */
  readonly atMs: number
  /** CPU ms used by the process tree during the window. */
  readonly cpuMs: number
  /** Wall ms of the window. */
  readonly wallMs: number
}

/**
 * Samples the tree's CPU in windows of `windowMs` until one window uses less than `maxShare` of one
 * core, or `withinMs` has passed. Returns every window; the last one is the verdict. A guest still
 * burning a core fails every window (on a loaded machine a spinning thread still gets well above
 * 25% of a core), an idle runtime passes within a window or two; `withinMs` leaves room for a
 * replacement worker or engine process to boot (from source, under tsx, that takes seconds of CPU).
 */
export async function cpuSettles({
  withinMs = 5000,
  windowMs = 500,
  maxShare = 0.25,
} = {}): Promise<{ settled: boolean; windows: CpuWindow[] }> {
  const start = performance.now()
  const windows: CpuWindow[] = []
  while (performance.now() - start < withinMs) {
    const t0 = performance.now()
    const c0 = treeCpuMs()
    await new Promise((resolve) => setTimeout(resolve, windowMs))
    const wallMs = performance.now() - t0
    const cpuMs = treeCpuMs() - c0
    windows.push({ atMs: t0 - start, cpuMs, wallMs })
    if (cpuMs < wallMs * maxShare) return { settled: true, windows }
  }
  return { settled: false, windows }
}
