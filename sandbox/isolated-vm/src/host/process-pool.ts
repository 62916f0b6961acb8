import { availableParallelism } from 'node:os'
import { LONG_RUN_CPU_MS, LONG_RUN_HELD_MS } from '@ptc/sandbox/backend'
import type { ChildConfig } from '../engine/child-entry.js'
import { EngineChild, childCommand } from './child.js'
import type { ChildCommand, ChildOwner } from './child.js'
import { HotThreads } from './hot-threads.js'
import type { RunHost } from './run-host.js'
import { DISPOSED } from '../messages.js'

/** Delay before respawning after the `n`-th child in a row failed to start: 50 ms doubling, at most 5 s. */
function backoffMs(failures: number): number {
  return Math.min(5000, 50 * 2 ** Math.max(0, failures - 1))
}

/** How often the pool looks at whether runs in progress have become long (their engines report CPU every 50 ms). */
const REVIEW_MS = 25
/** The cores: with more runs in progress than this, threads that keep running yield to the others. */
const CORES = availableParallelism()
/**
 * How long after the last fresh run long runs go on yielding the cores: in a stream of short runs they stay lowered
 * between two (the host thread that takes the next one needs the cores too), alone they get their priority back.
 */
const YIELD_HOLD_MS = 1000

/** Every live pool, for the one `exit` hook that kills their children when this process exits. */
const livePools = new Set<ProcessPool>()
let exitHooked = false

function killAllChildren(): void {
  for (const pool of livePools) pool.killAll('the host process exited')
}

/** Options of a `ProcessPool`. */
export interface ProcessPoolOptions {
  /** Child processes kept alive. */
  processes: number
  /** Runs one child hosts at once. */
  runsPerProcess: number
  /** How long a child may take to confirm that a finished run no longer runs. */
  graceMs: number
  config: ChildConfig
  /** How children are started (tests); default `childCommand()`. */
  command?: ChildCommand
  /**
   * Runs a child may host past `runsPerProcess`, one for each of its runs past `LONG_RUN_CPU_MS` of CPU, up to this
   * many in the pool (each in an isolate with its own thread); the pool lends as many places (`lend`). Default 0.
   */
  maxExtraRuns?: number
  /** Told how many places the pool lends past its capacity, whenever that changes (`RunGate.lend`). */
  lend?: (places: number) => void
  /** How many runs wait for a place (`RunGate.queued`): runs that held their engine `LONG_RUN_HELD_MS` lend theirs. */
  waiting?: () => number
}

/**
 * `containment: 'process'`: a fixed number of engine child processes (the first starts alone, the others
 * once it is ready), each hosting up to
 * `runsPerProcess` runs (one isolate each). A run goes to the ready child with the fewest runs, or
 * waits (its wall timer still runs) until a place frees or a child becomes ready; a session run whose
 * isolate a live child keeps goes to that child only (runs behind it in the queue may pass it meanwhile). A child that
 * dies fails only the runs it hosted and is replaced at once (a child killed from outside gives back the runs it was
 * given but never started, which go to another child); one that dies before it became ready is replaced after a growing
 * delay. Children are killed on `dispose` and when this process exits.
 *
 * With `maxExtraRuns`, a long run (past `LONG_RUN_CPU_MS` of CPU, or `LONG_RUN_HELD_MS` on its engine while runs
 * wait) no longer keeps fresh runs waiting: its child takes one
 * more run beside it (an isolate thread: the OS shares the cores), and the pool lends its place to the runtime's
 * gate. Fresh runs go to children without long runs first; one placed beside a long run fails with it (`crash`)
 * if that run must be killed (a long built-in that ignores its stop).
 */
export class ProcessPool implements ChildOwner {
  readonly #options: ProcessPoolOptions
  readonly #children: EngineChild[] = []
  #waiting: RunHost[] = []
  readonly #command: ChildCommand
  #failures = 0
  #spawned = 0
  #respawnTimer: ReturnType<typeof setTimeout> | undefined
  #disposed = false
  /** Whether a child has been ready yet: until then one starts (`#wanted`). */
  #firstUp = false
  /** The runs started on each child and not ended yet (for the long runs each hosts). */
  readonly #hosted = new Map<EngineChild, Set<RunHost>>()
  #lent = 0
  #reviewTimer: ReturnType<typeof setTimeout> | undefined
  readonly #hot = new HotThreads()
  /** The children whose threads `#hot` looks at (they host long runs), with their pids. */
  readonly #watched = new Map<EngineChild, number>()
  /** When a fresh run was last seen in progress or waiting (see `YIELD_HOLD_MS`). */
  #lastFresh = -Infinity

  constructor(options: ProcessPoolOptions) {
    this.#options = options
    this.#command = options.command ?? childCommand()
    livePools.add(this)
    if (!exitHooked) {
      exitHooked = true
      process.on('exit', killAllChildren)
    }
    // The first child starts alone, the others once it is ready (see `#wanted`).
    this.#spawn()
  }

  /**
   * Children to keep: one until a child has been ready (a broken setup retries one child at a time), then `processes`.
   * Children that start together share the cores with each other and the host, so the first is ready later than one
   * starting alone (on 2 cores, a first run asked at creation answered in 131-152 ms against 108-112).
   */
  #wanted(): number {
    return this.#firstUp ? this.#options.processes : 1
  }

  /** A child is ready: the others start. */
  #firstDone(): void {
    if (this.#firstUp) return
    this.#firstUp = true
    this.#fill()
  }

  /** Starts children up to `#wanted()`; stops at the first that cannot be forked (it is retried later). */
  #fill(): void {
    while (!this.#disposed && this.#children.length < this.#wanted() && this.#spawn());
  }

  /** The pids of the live child processes (diagnostics). */
  get pids(): number[] {
    return this.#children.map((c) => c.pid).filter((pid): pid is number => pid !== undefined)
  }

  /** Children started so far (diagnostics). */
  get spawned(): number {
    return this.#spawned
  }

  /** Places lent past the pool's capacity now (see `maxExtraRuns`). */
  get lent(): number {
    return this.#lent
  }

  /**
   * Counts the live runs past `LONG_RUN_CPU_MS` and lends as many places (at most `maxExtraRuns`); their children
   * take as many more runs, and their threads that keep running yield the cores to the others (`HotThreads`). Looks
   * again every `REVIEW_MS` while runs are in progress.
   */
  #review(): void {
    clearTimeout(this.#reviewTimer)
    this.#reviewTimer = undefined
    const max = this.#options.maxExtraRuns ?? 0
    if (max <= 0 || this.#disposed) return
    let long = 0
    let fresh = 0
    let live = 0
    const waiting = this.#waitingNow()
    const hot = new Set<EngineChild>()
    for (const [child, runs] of this.#hosted) {
      for (const run of runs) {
        if (run.ended) runs.delete(run)
        else if (run.cpuMs >= LONG_RUN_CPU_MS) {
          long++
          hot.add(child)
        } else {
          if (waiting > 0 && run.heldMs >= LONG_RUN_HELD_MS) long++
          fresh++
        }
        live++
      }
      if (runs.size === 0) this.#hosted.delete(child)
    }
    // More runs than cores: threads that keep running yield to the others whatever CPU their runs have used so far
    // (ten programs burning CPU on two cores take 250 ms each to use LONG_RUN_CPU_MS, and every message of a fresh
    // run waited behind them meanwhile).
    const crowded = live > CORES
    if (crowded) for (const child of this.#hosted.keys()) hot.add(child)
    // Long runs yield the cores while fresh runs of this pool want them, not to the rest of the machine.
    const now = performance.now()
    if ((long > 0 || crowded) && (fresh > 0 || waiting > 0)) this.#lastFresh = now
    if (now - this.#lastFresh >= YIELD_HOLD_MS) hot.clear()
    for (const child of hot) {
      const pid = child.pid
      if (pid === undefined) continue
      this.#watched.set(child, pid)
      this.#hot.sample(pid)
    }
    for (const [child, pid] of this.#watched) {
      if (hot.has(child)) continue
      this.#watched.delete(child)
      if (child.alive) this.#hot.restore(pid)
      else this.#hot.forget(pid)
    }
    const lent = Math.min(long, max)
    if (lent !== this.#lent) {
      this.#lent = lent
      this.#options.lend?.(lent)
      // Children with long runs have room now (not from inside `#startQueued`, which may have called this).
      queueMicrotask(() => this.#startQueued())
    }
    if (this.#hosted.size > 0) {
      this.#reviewTimer = setTimeout(() => this.#review(), REVIEW_MS)
      // A run in progress keeps the process alive through its own wall timer.
      this.#reviewTimer.unref()
    }
  }

  /** Runs waiting for a place in the gate or for a child. */
  #waitingNow(): number {
    return this.#waiting.length + (this.#options.waiting?.() ?? 0)
  }

  /**
   * The live long runs of `child` (past `LONG_RUN_CPU_MS` of CPU, or `LONG_RUN_HELD_MS` on it while runs wait), at
   * most the lent places (each lets it take one more run).
   */
  #longRuns(child: EngineChild): number {
    if (this.#lent === 0) return 0
    const waiting = this.#waitingNow()
    let long = 0
    for (const run of this.#hosted.get(child) ?? []) {
      if (run.ended) continue
      if (run.cpuMs >= LONG_RUN_CPU_MS || (waiting > 0 && run.heldMs >= LONG_RUN_HELD_MS)) long++
    }
    return Math.min(long, this.#lent)
  }

  /** Places `run` on a child now, or when one has room. */
  place(run: RunHost): void {
    // Runs that ended while waiting (their wall, an abort) leave here too, even when no child ever
    // becomes ready: the list stays bounded by the runs admitted at once.
    if (this.#waiting.length > 0) this.#waiting = this.#waiting.filter((r) => !r.ended)
    this.#waiting.push(run)
    this.#startQueued()
  }

  // ---- ChildOwner ----

  ready(): void {
    this.#failures = 0
    this.#startQueued()
    this.#firstDone()
  }

  freed(): void {
    this.#review()
    this.#startQueued()
  }

  answered(child: EngineChild, stopping: boolean): void {
    // The thread that must stop may be one lowered as hot: with the cores taken by the child's other runs, it did not
    // get to stop within the grace, and the child was killed with every run it hosted. They all get their priority
    // back; those that keep running are lowered again a few looks later.
    const pid = this.#watched.get(child)
    if (stopping && pid !== undefined) {
      this.#watched.delete(child)
      this.#hot.restore(pid)
    }
    this.#review()
  }

  exited(child: EngineChild, started: boolean, orphans: RunHost[]): void {
    const i = this.#children.indexOf(child)
    if (i !== -1) this.#children.splice(i, 1)
    this.#hosted.delete(child)
    this.#review()
    if (this.#disposed) {
      for (const run of orphans) run.lost(DISPOSED)
      return
    }
    if (started) this.#spawn()
    else this.#respawnLater()
    // Runs the child never started go first, in their order.
    if (orphans.length > 0) {
      this.#waiting.unshift(...orphans)
      this.#startQueued()
    }
  }

  #respawnLater(): void {
    this.#failures++
    if (this.#respawnTimer !== undefined) return
    this.#respawnTimer = setTimeout(() => {
      this.#respawnTimer = undefined
      this.#fill()
    }, backoffMs(this.#failures))
    this.#respawnTimer.unref()
  }

  async dispose(): Promise<void> {
    this.#disposed = true
    clearTimeout(this.#respawnTimer)
    clearTimeout(this.#reviewTimer)
    this.#waiting.length = 0
    livePools.delete(this)
    const children = [...this.#children]
    this.killAll(DISPOSED)
    await Promise.all(children.map((child) => child.whenExited()))
  }

  /** Kills every child now (SIGKILL). */
  killAll(reason: string): void {
    for (const child of this.#children) child.kill(reason)
  }

  /** Starts one child; false when `fork` itself threw (then it is retried later). */
  #spawn(): boolean {
    if (this.#disposed) return false
    const { config, graceMs } = this.#options
    try {
      this.#children.push(new EngineChild(this, config, graceMs, this.#command))
      this.#spawned++
      return true
    } catch {
      this.#respawnLater()
      return false
    }
  }

  #startQueued(): void {
    let i = 0
    while (i < this.#waiting.length) {
      const run = this.#waiting[i] as RunHost
      if (run.ended) {
        this.#waiting.splice(i, 1)
        continue
      }
      const home = run.home === undefined ? undefined : this.#children.find((c) => c === run.home)
      const child = this.#childFor(home)
      if (child === undefined) {
        // No child takes a run without a home: none takes those after it either.
        if (home === undefined) return
        i++
        continue
      }
      this.#waiting.splice(i, 1)
      child.start(run)
      const hosted = this.#hosted.get(child)
      if (hosted === undefined) this.#hosted.set(child, new Set([run]))
      else hosted.add(run)
      if (this.#reviewTimer === undefined) this.#review()
    }
  }

  /**
   * `home` when it has room, else (no home) the ready child with room hosting the fewest long runs (a run beside one
   * dies with it if it must be killed), then the least loaded, then the one keeping the fewest session isolates (so
   * sessions spread over the children, and a session's run less often finds its child busy); never a child waiting
   * to learn whether a stopped run really stopped (it may be killed within the grace, with every run it hosts). A
   * child's long runs (see `maxExtraRuns`) do not count against its room.
   */
  #childFor(home: EngineChild | undefined): EngineChild | undefined {
    let best: { child: EngineChild; long: number } | undefined
    for (const child of home === undefined ? this.#children : [home]) {
      if (!child.ready || child.suspect) continue
      const long = this.#longRuns(child)
      if (child.load - long >= this.#options.runsPerProcess) continue
      if (best === undefined || better(child, long, best.child, best.long)) best = { child, long }
    }
    return best?.child
  }
}

/** Whether `a` (hosting `aLong` long runs) takes a fresh run before `b` (see `ProcessPool#childFor`). */
function better(a: EngineChild, aLong: number, b: EngineChild, bLong: number): boolean {
  if (aLong !== bLong) return aLong < bLong
  if (a.load !== b.load) return a.load < b.load
  return a.keptSessions < b.keptSessions
}
