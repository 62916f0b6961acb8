import { readdirSync, readFileSync } from 'node:fs'
import { setPriority } from 'node:os'

/** The nice value of an engine thread that keeps running: the OS gives fresh runs' threads the cores first. */
export const HOT_THREAD_NICE = 10

/**
 * Samples in a row a thread must be found running (or waiting for a core) to count as hot, over at least `HOT_MS`: the
 * pool looks more often while runs come and go, and a fresh run's thread waiting a few ms for a core is not hot.
 */
const HOT_SAMPLES = 3
const HOT_MS = 50

interface ThreadSeen {
  streak: number
  /** When the streak began (`performance.now()`). */
  since: number
  niced: boolean
}

/**
 * The threads of engine processes hosting long runs that keep running (a guest's isolate thread computing), each
 * lowered to `HOT_THREAD_NICE` once found runnable `HOT_SAMPLES` samples in a row over `HOT_MS`, and given its
 * priority back once found asleep or when its process hosts no long run any more (Linux `/proc`; elsewhere nothing
 * happens). A process that may not raise a thread's priority back (unprivileged, or without CAP_SYS_NICE) stops
 * lowering any: isolated-vm reuses its threads for other isolates, which would run at the lowered priority.
 */
export class HotThreads {
  readonly #seen = new Map<number, Map<number, ThreadSeen>>()
  #restoreDenied = false

  /** Looks at the threads of process `pid`, one that hosts a long run. */
  sample(pid: number): void {
    if (this.#restoreDenied) return
    let tids: string[]
    try {
      tids = readdirSync(`/proc/${pid}/task`)
    } catch {
      return
    }
    let seen = this.#seen.get(pid)
    if (seen === undefined) this.#seen.set(pid, (seen = new Map()))
    const live = new Set<number>()
    const now = performance.now()
    for (const name of tids) {
      const tid = Number(name)
      // The main thread serves the process's channel: never lowered.
      if (tid === pid) continue
      live.add(tid)
      const state = threadState(pid, tid)
      let thread = seen.get(tid)
      if (thread === undefined) seen.set(tid, (thread = { streak: 0, since: 0, niced: false }))
      if (state === 'R') {
        if (thread.streak++ === 0) thread.since = now
        const hot = thread.streak >= HOT_SAMPLES && now - thread.since >= HOT_MS
        if (!thread.niced && hot) thread.niced = nice(tid, HOT_THREAD_NICE)
      } else {
        thread.streak = 0
        if (thread.niced) this.#restoreThread(tid, thread)
      }
    }
    for (const tid of seen.keys()) if (!live.has(tid)) seen.delete(tid)
  }

  /** Gives back the priority of every thread of `pid` it lowered (the process hosts no long run any more). */
  restore(pid: number): void {
    const seen = this.#seen.get(pid)
    this.#seen.delete(pid)
    if (seen === undefined) return
    let tids: Set<string>
    try {
      tids = new Set(readdirSync(`/proc/${pid}/task`))
    } catch {
      return
    }
    // Only threads still in the process: the id of one that exited may name another thread now.
    for (const [tid, thread] of seen) if (thread.niced && tids.has(String(tid))) this.#restoreThread(tid, thread)
  }

  /** Forgets process `pid` (it exited: its threads are gone). */
  forget(pid: number): void {
    this.#seen.delete(pid)
  }

  #restoreThread(tid: number, thread: ThreadSeen): void {
    thread.niced = false
    if (!nice(tid, 0)) this.#restoreDenied = true
  }
}

/** The scheduler state of thread `tid` of `pid` (`R`: running or waiting for a core), undefined when it is gone. */
function threadState(pid: number, tid: number): string | undefined {
  return statFields(`/proc/${pid}/task/${tid}/stat`)?.[0]
}

function nice(tid: number, value: number): boolean {
  try {
    setPriority(tid, value)
    return true
  } catch {
    return false
  }
}

// The CPU time of engine processes and their threads, which the grace after a run's answer is measured by.

/**
 * The CPU time a process has used, in ms (user + system, all its threads), from `/proc/<pid>/stat`;
 * undefined where there is no such file (not Linux), it cannot be read, or the process is gone (a zombie).
 */
export function processCpuMs(pid: number | undefined): number | undefined {
  return pid === undefined ? undefined : cpuMsOf(`/proc/${pid}/stat`)
}

/**
 * The fields of a `stat` file of `/proc` after the command name (which may hold spaces), from the 3rd: the state
 * first (`R` running or waiting for a core, `Z` a zombie, …); undefined where it cannot be read.
 */
function statFields(path: string): string[] | undefined {
  try {
    const stat = readFileSync(path, 'latin1')
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  } catch {
    return undefined
  }
}

/** User + system CPU time (ms) from a `stat` file of `/proc`; undefined if unreadable or the process is a zombie. */
function cpuMsOf(path: string): number | undefined {
  const fields = statFields(path)
  // utime and stime are the 14th and 15th fields.
  if (fields === undefined || fields[0] === 'Z' || fields[0] === 'X') return undefined
  const ticks = Number(fields[11]) + Number(fields[12])
  return Number.isFinite(ticks) ? ticks * MS_PER_TICK : undefined
}

/**
 * The CPU time of each thread of process `pid` (ms, by thread id; see `processCpuMs`), empty where it cannot be read.
 */
export function threadCpuMs(pid: number): Map<number, number> {
  const times = new Map<number, number>()
  let tids: string[]
  try {
    tids = readdirSync(`/proc/${pid}/task`)
  } catch {
    return times
  }
  for (const tid of tids) {
    const ms = cpuMsOf(`/proc/${pid}/task/${tid}/stat`)
    if (ms !== undefined) times.set(Number(tid), ms)
  }
  return times
}

/** The threads of `pid` other than its main one (which serves the channel) that used at least `ms` between looks. */
export function busyThreads(pid: number, before: Map<number, number>, after: Map<number, number>, ms: number): number {
  let busy = 0
  for (const [tid, cpu] of after) if (tid !== pid && cpu - (before.get(tid) ?? 0) >= ms) busy++
  return busy
}

/** Linux reports process times in clock ticks of 1/100 s (USER_HZ) on every architecture Node supports. */
const MS_PER_TICK = 10
