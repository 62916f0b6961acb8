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
  try {
    const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'latin1')
    return stat[stat.lastIndexOf(')') + 2]
  } catch {
    return undefined
  }
}

function nice(tid: number, value: number): boolean {
  try {
    setPriority(tid, value)
    return true
  } catch {
    return false
  }
}
