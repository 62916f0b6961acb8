import type { ChildConfig } from '../engine/child-entry.js'
import { EngineChild, childCommand } from './child.js'
import type { ChildCommand, ChildOwner } from './child.js'
import type { RunHost } from './run-host.js'

/** Delay before respawning after the `n`-th child in a row failed to start: 50 ms doubling, at most 5 s. */
function backoffMs(failures: number): number {
  return Math.min(5000, 50 * 2 ** Math.max(0, failures - 1))
}

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
}

/**
 * `containment: 'process'`: a fixed number of engine child processes (the first starts alone, the others
 * once it is ready), each hosting up to
 * `runsPerProcess` runs (one isolate each). A run goes to the ready child with the fewest runs, or
 * waits (its wall timer still runs) until a place frees or a child becomes ready; a session run whose
 * isolate a live child keeps goes to that child only (runs behind it in the queue may pass it meanwhile). A child that dies
 * fails only the runs it hosted and is replaced at once (a child killed from outside gives back the runs it
 * was given but never started, which go to another child); one that dies before it became ready is
 * replaced after a growing delay. Children are killed on `dispose` and when this process exits.
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
   * Children to keep: one until a child has been ready (a broken setup retries one child at a time), then `processes`. Children that start
   * together share the cores with each other and the host, so the first is ready later than one
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
    this.#startQueued()
  }

  exited(child: EngineChild, started: boolean, orphans: RunHost[]): void {
    const i = this.#children.indexOf(child)
    if (i !== -1) this.#children.splice(i, 1)
    if (this.#disposed) {
      for (const run of orphans) run.lost('the runtime was disposed')
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
    this.#waiting.length = 0
    livePools.delete(this)
    const children = [...this.#children]
    this.killAll('the runtime was disposed')
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
    }
  }

  /**
   * `home` when it has room, else (no home) the least loaded ready child with room, and of those the
   * one keeping the fewest session isolates (so sessions spread over the children, and a session's
   * run less often finds its child busy); never a child waiting to learn whether a stopped run
   * really stopped (it may be killed within the grace, with every run it hosts).
   */
  #childFor(home: EngineChild | undefined): EngineChild | undefined {
    let best: EngineChild | undefined
    for (const child of home === undefined ? this.#children : [home]) {
      if (!child.ready || child.suspect || child.load >= this.#options.runsPerProcess) continue
      if (best === undefined || child.load < best.load || (child.load === best.load && child.keptSessions < best.keptSessions)) best = child
    }
    return best
  }
}
