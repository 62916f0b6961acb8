import { availableParallelism } from 'node:os'
import type { Worker } from 'node:worker_threads'
import { LONG_RUN_CPU_MS, LONG_RUN_HELD_MS } from '@ptc/sandbox/backend'
import type { SessionMemory } from '../engine/session-memory.js'
import { compile, type QuickJSVariantName, type WasmModule } from '../engine/module.js'
import { SpinPlaces } from '../engine/mailbox.js'
import type { RunInput } from '../engine/protocol.js'
import type { Engines } from './engines.js'
import type { RunHost } from './run-host.js'
import { spawnEngineWorker } from './spawn.js'
import { type SlotOwner, WorkerSlot } from './worker-slot.js'
import type { EngineWorkerData } from '../engine/worker-entry.js'

interface Job {
  host: RunHost
  input: RunInput
}

export interface WorkerPoolOptions {
  size: number
  variant: QuickJSVariantName
  /** The memory limit the workers warm a module for. */
  warmBytes: number
  /**
   * Room of each worker's log journal (what survives a terminated worker): the runtime's default
   * `maxOutputBytes`, at most `MAX_JOURNAL_BYTES`. A run with a larger budget keeps a prefix on a kill.
   */
  journalBytes?: number
  /** Starts one engine worker (default `spawnEngineWorker`; tests inject failing ones). */
  spawn?: (data: EngineWorkerData) => Worker
  /**
   * Workers the pool may add past `size`, one for each long run that holds a worker (past `LONG_RUN_CPU_MS` of CPU, or
   * `LONG_RUN_HELD_MS` on it while runs wait): the pool lends their places (`lendTo`), so fresh runs do not wait
   * behind such runs. Default 0: the pool keeps its size.
   */
  maxExtraRuns?: number
}

/** Buffers of let-go session memories kept for the workers' captures, and the largest kept (as `offerSpare`). */
const MAX_HOST_SPARES = 8
const MAX_SPARE_BYTES = 1024 * 1024
/** The largest log journal a worker gets (shared memory, committed as it is written). */
export const MAX_JOURNAL_BYTES = 16 * 1024 * 1024
/** How long a worker past the pool's need stays idle before it exits (a burst of long runs tends to come back). */
const EXTRA_IDLE_MS = 5000
/** The least delay between two looks at whether the runs in progress have become long. */
const MIN_REVIEW_MS = 20
/**
 * How long after the last fresh run long runs go on yielding the cores: in a stream of short runs they stay lowered
 * between two (the host thread that takes the next one needs the cores too), alone they get their priority back.
 */
const YIELD_HOLD_MS = 1000

/**
 * Worker isolation: a number of worker threads (booted with the first run, or when the runtime is
 * created: the first alone, the others once it is up; see `warm`), one run each at
 * a time, FIFO queue (the runtime's `RunGate` admits at most one run per worker by default, so this
 * queue mostly holds runs waiting for a worker that boots or is being replaced). Each worker shares a
 * control word with the host (abort and wall reach a busy guest through the interrupt handler); the
 * host's watchdog terminates a worker that does not stop, and a fresh one replaces it at once. A worker that dies
 * before it finished a run (failed to boot, crashed) is replaced after a delay that doubles with each such death in a
 * row, so a broken environment cannot make the pool respawn in a tight loop; runs waiting meanwhile still end at their
 * own deadline (their `RunHost` timer). Workers are unreferenced while idle: an idle pool does not keep the process
 * alive, a pending run does (its deadline timer, and its worker while it runs).
 *
 * With `maxExtraRuns`, a long run (one that has used `LONG_RUN_CPU_MS` of CPU, or held its worker `LONG_RUN_HELD_MS`
 * while runs wait) no longer keeps fresh runs waiting: the pool
 * lends its place to the runtime's gate (`lendTo`) and boots a worker for the run that takes it, at once (one spare
 * is kept up besides); while fresh runs are in progress or workers boot, the long run's thread runs at
 * `LONG_RUN_NICE`, so the OS gives them the cores first. Workers past the need exit after `EXTRA_IDLE_MS` idle.
 */
export class WorkerPool implements Engines, SlotOwner {
  readonly #size: number
  readonly #variant: QuickJSVariantName
  readonly #warmBytes: number
  readonly #journalBytes: number
  readonly #spawn: (data: EngineWorkerData) => Worker
  readonly #maxExtra: number
  /** Places lent past the size: the busy workers whose runs are long, at most `#maxExtra`. */
  #lent = 0
  #lend: ((places: number) => void) | undefined
  /** How many runs wait for a place in the runtime's gate (see `lendTo`). */
  #gateWaiting: () => number = () => 0
  /** The next look at whether runs in progress have become long. */
  #reviewTimer: ReturnType<typeof setTimeout> | undefined
  #trimTimer: ReturnType<typeof setTimeout> | undefined
  /** Workers spawned by slots that have since been retired. */
  #retiredSpawned = 0
  /** When a fresh run was last seen in progress or waiting (see `YIELD_HOLD_MS`). */
  #lastFresh = -Infinity
  readonly #slots: WorkerSlot[] = []
  readonly #queue: Job[] = []
  /** Session memories that came from a worker (their buffers are theirs alone: transferred). */
  readonly #fromWorker = new WeakSet<SessionMemory>()
  /** Buffers of such memories the host let go of, for the workers' next captures (`offerSpare`). */
  readonly #spares: ArrayBuffer[] = []
  /** Workers the watchdog terminated whose threads have not exited yet. */
  readonly #exiting = new Set<Promise<unknown>>()
  /**
   * How many of the workers may spin for a reply at once: all cores but one, which is left to the
   * host thread that makes the replies (none on one core).
   */
  readonly spinPlaces = new SpinPlaces(availableParallelism() - 1)
  #disposed = false
  /** Whether a worker has booted yet: until then the pool boots one (see `warm`). */
  #firstBooted = false
  /**
   * The engine's WebAssembly module compiled on this thread, which every worker takes (undefined while compiling, or if
   * that failed).
   */
  wasmModule: WasmModule | undefined
  /**
   * The used page count of a booted engine, from the first worker that booted: the workers after it need not search it.
   */
  usedPages: number | undefined
  #compiling: Promise<void> | undefined

  constructor(options: WorkerPoolOptions) {
    this.#size = Math.max(1, Math.floor(options.size))
    this.#variant = options.variant
    this.#warmBytes = options.warmBytes
    this.#journalBytes = Math.min(MAX_JOURNAL_BYTES, options.journalBytes ?? 1024 * 1024)
    this.#spawn = options.spawn ?? spawnEngineWorker
    const extra = options.maxExtraRuns ?? 0
    this.#maxExtra = Number.isInteger(extra) && extra > 0 ? extra : 0
  }

  /** Workers at most: the size and the extra ones. */
  get maxWorkers(): number {
    return this.#size + this.#maxExtra
  }

  /** Places lent past the size now (see `lendTo`). */
  get lent(): number {
    return this.#lent
  }

  /**
   * Tells `lend` how many places the pool lends past its size, now and whenever that changes (`RunGate.lend`);
   * `waiting` says how many runs wait for a place (`RunGate.queued`).
   */
  lendTo(lend: (places: number) => void, waiting?: () => number): void {
    this.#lend = lend
    if (waiting !== undefined) this.#gateWaiting = waiting
    lend(this.#lent)
  }

  get journalBytes(): number {
    return this.#journalBytes
  }

  get size(): number {
    return this.#size
  }

  execute(host: RunHost, input: RunInput): void {
    this.#queue.push({ host, input })
    this.startQueued()
  }

  /**
   * Boots the workers now (they stay unreferenced while idle, so a warm pool never keeps the process
   * alive): the first alone, the others once it is up and free, or has ended its first run, or another run
   * waits for it (`booted`; a setup where none boots retries one). Workers that boot together share the
   * cores with each other and with the host thread, so the first of them is ready later than one booting
   * alone (on 2 cores, a first run asked at creation answered in 170-230 ms with both booting at once,
   * 120-165 ms with one).
   */
  warm(): void {
    if (this.#disposed) return
    // The engine's module, compiled on this thread (off it, mostly) for the workers spawned once it is: they take it
    // instead of compiling their own, and share its machine code. The first worker does not wait for it.
    if (this.#compiling === undefined) {
      this.#compiling = compile(this.#variant).then(
        (module) => void (this.wasmModule = module),
        () => undefined, // Each worker then compiles its own, and reports why it cannot.
      )
    }
    const target = this.#firstBooted ? this.#wanted() : 1
    while (this.#slots.length < target)
      this.#slots.push(new WorkerSlot(this, this.#variant, this.#warmBytes, this.#spawn))
  }

  /**
   * Workers to keep: the size, one per lent place (its run finds a worker up or booting, not a queue behind the long
   * run), and with `maxExtraRuns` one spare, up before the next run past `LONG_RUN_CPU_MS` lends its place or a
   * terminated worker's replacement boots: a worker took about 150 ms of CPU to boot and warm up (built, 2 loaded
   * cores), which cores busy with long runs stretch further.
   */
  #wanted(): number {
    return Math.min(this.maxWorkers, this.#size + this.#lent + (this.#maxExtra > 0 ? 1 : 0))
  }

  /**
   * Counts the busy workers whose runs are long (used `LONG_RUN_CPU_MS` of CPU, or held the worker
   * `LONG_RUN_HELD_MS` while runs wait) and lends as many places (at most `#maxExtra`), booting workers for them;
   * lowers the priority of the threads that burn CPU while fresh runs are about; looks again when a run could pass
   * a mark at the earliest (CPU is counted only while the guest runs) or a long run's priority is due back, and
   * retires workers past the need once they have been idle `EXTRA_IDLE_MS`.
   */
  review(): void {
    clearTimeout(this.#reviewTimer)
    this.#reviewTimer = undefined
    if (this.#maxExtra === 0 || this.#disposed) return
    const waiting = this.#queue.length + this.#gateWaiting()
    const long: WorkerSlot[] = []
    let held = 0
    let soonest = Infinity
    for (const slot of this.#slots) {
      const used = slot.runCpuMs()
      const heldMs = slot.runHeldMs()
      if (used === undefined || heldMs === undefined) continue
      if (used >= LONG_RUN_CPU_MS) long.push(slot)
      else if (heldMs >= LONG_RUN_HELD_MS && waiting > 0) held++
      else {
        // Held long with nothing waiting: look again soon, in case a run comes to wait.
        const untilHeld = heldMs >= LONG_RUN_HELD_MS ? MIN_REVIEW_MS : LONG_RUN_HELD_MS - heldMs
        soonest = Math.min(soonest, LONG_RUN_CPU_MS - used, untilHeld)
      }
    }
    const lent = Math.min(long.length + held, this.#maxExtra)
    if (lent !== this.#lent) {
      this.#lent = lent
      if (this.#firstBooted) this.warm()
      // May admit a run at once, and review again: this look goes on from the state it saw.
      this.#lend?.(lent)
    }
    // Long runs yield the cores to this pool's fresh runs and to the workers booting for them (a boot takes
    // about 150 ms of CPU), not to the rest of the machine.
    const now = performance.now()
    const fresh = soonest !== Infinity || held > 0 || waiting > 0 || this.#slots.some((s) => s.booting)
    if (long.length > 0 && fresh) this.#lastFresh = now
    const yieldFor = this.#lastFresh + YIELD_HOLD_MS - now
    for (const slot of long) {
      if (yieldFor > 0) slot.demote()
      else slot.promote()
    }
    // Their priority comes back once the hold is over: look again then.
    if (yieldFor > 0 && long.length > 0) soonest = Math.min(soonest, yieldFor + 1)
    if (soonest !== Infinity) {
      clearTimeout(this.#reviewTimer)
      this.#reviewTimer = setTimeout(() => this.review(), Math.max(MIN_REVIEW_MS, Math.ceil(soonest)))
      // A run in progress keeps the process alive through its own deadline timer.
      this.#reviewTimer.unref()
    }
    if (this.#slots.length > this.#wanted()) this.#trimLater(EXTRA_IDLE_MS)
  }

  #trimLater(delayMs: number): void {
    if (this.#trimTimer !== undefined) return
    this.#trimTimer = setTimeout(() => {
      this.#trimTimer = undefined
      this.#trim()
    }, delayMs)
    this.#trimTimer.unref()
  }

  /** Retires workers past `#wanted()` idle `EXTRA_IDLE_MS`: low-priority ones, then those keeping no session, first. */
  #trim(): void {
    if (this.#disposed) return
    const now = performance.now()
    let soonest = Infinity
    const rank = (s: WorkerSlot): number => (s.lowPriority ? 0 : 2) + (s.resident ? 1 : 0)
    const idle = this.#slots.filter((s) => s.idle).sort((a, b) => rank(a) - rank(b))
    for (const slot of idle) {
      if (this.#slots.length <= this.#wanted()) return
      const wait = slot.idleSince + EXTRA_IDLE_MS - now
      if (wait > 0) {
        soonest = Math.min(soonest, wait)
        continue
      }
      this.#slots.splice(this.#slots.indexOf(slot), 1)
      this.#retiredSpawned += slot.spawned
      const exited = slot.terminate().catch(() => undefined)
      this.#exiting.add(exited)
      void exited.then(() => this.#exiting.delete(exited))
    }
    // Still past the need: busy workers, or idle ones not idle long enough yet.
    if (this.#slots.length > this.#wanted()) this.#trimLater(soonest === Infinity ? EXTRA_IDLE_MS : Math.ceil(soonest))
  }

  /** A worker booted and is free, or ended its first run, or a run waits for it: the others boot now. */
  booted(): void {
    if (this.#firstBooted) return
    this.#firstBooted = true
    this.warm()
  }

  /** Starts queued jobs on free workers (spawning up to the pool size); drops jobs that ended while waiting. */
  startQueued(): void {
    while (!this.#disposed && this.#queue.length > 0) {
      const job = this.#queue[0] as Job
      if (job.host.ended) {
        this.#queue.shift()
        continue
      }
      // The first run boots the whole pool (if creating the runtime did not): a spare worker that is already
      // up is what lets the run after a terminated worker start at once instead of waiting for the replacement.
      this.warm()
      // A session's next run goes to the worker that holds its memory, when that one is free; a run, to one whose
      // idle engine has its memory limit (a worker keeps one engine: another limit boots a fresh one, ~35 ms).
      const id = job.input.session?.id
      const bytes = job.input.limits.memoryBytes
      const slot =
        (id === undefined ? undefined : this.#slots.find((s) => s.idle && s.holds(id, bytes))) ??
        this.#slots.find((s) => s.idle && !s.lowPriority && s.engineBytes === bytes) ??
        this.#slots.find((s) => s.idle && !s.lowPriority) ??
        this.#slots.find((s) => s.idle)
      // Jobs wait for a free worker (one that boots, or one whose run ends); the first to wait for a busy
      // worker has the others boot.
      if (slot === undefined) {
        if (this.#slots.some((s) => s.busy)) this.booted()
        return
      }
      this.#queue.shift()
      slot.run(job.host, job.input)
      // Its run becomes long `LONG_RUN_CPU_MS` from now at the earliest: the next look is then.
      this.review()
    }
  }

  get disposed(): boolean {
    return this.#disposed
  }

  /** A session memory a worker sent (`recycle` takes only those). */
  received(memory: SessionMemory): void {
    this.#fromWorker.add(memory)
  }

  recycle(memory: SessionMemory): void {
    if (!this.#fromWorker.delete(memory)) return
    const buffer = memory.data.buffer
    if (!(buffer instanceof ArrayBuffer) || buffer.byteLength === 0 || buffer.byteLength > MAX_SPARE_BYTES) return
    if (this.#spares.length >= MAX_HOST_SPARES) this.#spares.shift()
    this.#spares.push(buffer)
  }

  /** A buffer for a worker's next capture, when one was let go of. */
  takeSpare(): ArrayBuffer | undefined {
    return this.#spares.pop()
  }

  /** Worker slots (each holds a live, booting or about-to-respawn worker); at most `maxWorkers`. */
  get workers(): number {
    return this.#slots.length
  }

  /** Terminated workers whose threads are still exiting (they exit within milliseconds: no guest code runs). */
  get exiting(): number {
    return this.#exiting.size
  }

  /** Terminates a worker without waiting for it; `dispose()` waits for it. */
  terminate(worker: Worker): void {
    const exited = worker.terminate().catch(() => undefined)
    this.#exiting.add(exited)
    void exited.then(() => this.#exiting.delete(exited))
  }

  /** Worker threads spawned so far (replacements included). */
  get spawned(): number {
    return this.#slots.reduce((n, s) => n + s.spawned, this.#retiredSpawned)
  }

  async dispose(): Promise<void> {
    this.#disposed = true
    clearTimeout(this.#reviewTimer)
    clearTimeout(this.#trimTimer)
    this.#queue.length = 0
    await Promise.all([...this.#slots.map((s) => s.terminate()), ...this.#exiting])
    this.#slots.length = 0
  }
}
