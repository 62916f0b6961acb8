import { availableParallelism } from 'node:os'
import type { Worker } from 'node:worker_threads'
import { LONG_RUN_CPU_MS } from '@ptc/sandbox/backend'
import type { SessionMemory } from '../engine/image.js'
import { compile, type QuickJSVariantName, type WasmModule } from '../engine/module.js'
import { LogJournal, journalBytes } from '../engine/journal.js'
import { ReplyMailbox, SpinPlaces } from '../engine/mailbox.js'
import {
  CONTROL_NONE,
  CONTROL_WORDS,
  CPU_DEADLINE,
  controlOf,
  cpuLeftWord,
  cpuOfWord,
  type FromWorker,
  type RunInput,
  type ToWorker,
} from '../engine/protocol.js'
import type { Engines } from './engines.js'
import type { RunHost } from './run-host.js'
import { spawnEngineWorker } from './spawn.js'
import { LONG_RUN_NICE, setThreadNice, withThreadId } from './thread-priority.js'
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
   * Workers the pool may add past `size`, one for each run past `LONG_RUN_CPU_MS` of CPU that holds a worker: the
   * pool lends their places (`lendTo`), so fresh runs do not wait behind such runs. Default 0: the pool keeps its size.
   */
  maxExtraRuns?: number
}

/** The first respawn delay after a worker failed without finishing a run; it doubles up to `MAX_BACKOFF_MS`. */
const FIRST_BACKOFF_MS = 100
const MAX_BACKOFF_MS = 5000
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
 * host's watchdog terminates a worker that does not stop, and a fresh one replaces it at once. A worker that dies before it finished a run
 * (failed to boot, crashed) is replaced after a delay that doubles with each such death in a row, so a
 * broken environment cannot make the pool respawn in a tight loop; runs waiting meanwhile still end at
 * their own deadline (their `RunHost` timer). Workers are unreferenced while idle: an idle pool does
 * not keep the process alive, a pending run does (its deadline timer, and its worker while it runs).
 *
 * With `maxExtraRuns`, a run that has used `LONG_RUN_CPU_MS` of CPU no longer keeps fresh runs waiting: the pool
 * lends its place to the runtime's gate (`lendTo`) and boots a worker for the run that takes it, at once (one spare
 * is kept up besides); while fresh runs are in progress the long run's thread runs at `LONG_RUN_NICE`, so the OS
 * gives them the cores first. Workers past the need exit after `EXTRA_IDLE_MS` idle.
 */
export class WorkerPool implements Engines {
  readonly #size: number
  readonly #variant: QuickJSVariantName
  readonly #warmBytes: number
  readonly #journalBytes: number
  readonly #spawn: (data: EngineWorkerData) => Worker
  readonly #maxExtra: number
  /** Places lent past the size: the busy workers whose runs are long, at most `#maxExtra`. */
  #lent = 0
  #lend: ((places: number) => void) | undefined
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
  /** The engine's WebAssembly module compiled on this thread, which every worker takes (undefined while compiling, or if that failed). */
  wasmModule: WasmModule | undefined
  /** The used page count of a booted engine, from the first worker that booted: the workers after it need not search it. */
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

  /** Tells `lend` how many places the pool lends past its size, now and whenever that changes (`RunGate.lend`). */
  lendTo(lend: (places: number) => void): void {
    this.#lend = lend
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
   * Counts the busy workers whose runs have used `LONG_RUN_CPU_MS` and lends as many places (at most `#maxExtra`),
   * booting workers for them, and lowers their threads' priority while fresh runs are about; looks again when a run
   * could pass the mark at the earliest (CPU is counted only while the guest runs) or a long run's priority is due
   * back, and retires workers past the need once they have been idle `EXTRA_IDLE_MS`.
   */
  review(): void {
    clearTimeout(this.#reviewTimer)
    this.#reviewTimer = undefined
    if (this.#maxExtra === 0 || this.#disposed) return
    const long: WorkerSlot[] = []
    let soonest = Infinity
    for (const slot of this.#slots) {
      const used = slot.runCpuMs()
      if (used === undefined) continue
      if (used >= LONG_RUN_CPU_MS) long.push(slot)
      else soonest = Math.min(soonest, LONG_RUN_CPU_MS - used)
    }
    // Long runs yield the cores while fresh runs of this pool want them, not to the rest of the machine.
    const now = performance.now()
    if (long.length > 0 && (soonest !== Infinity || this.#queue.length > 0)) this.#lastFresh = now
    const yieldFor = this.#lastFresh + YIELD_HOLD_MS - now
    for (const slot of long) {
      if (yieldFor > 0) slot.demote()
      else slot.promote()
    }
    // Their priority comes back once the hold is over: look again then.
    if (yieldFor > 0 && long.length > 0) soonest = Math.min(soonest, yieldFor + 1)
    const lent = Math.min(long.length, this.#maxExtra)
    if (lent !== this.#lent) {
      this.#lent = lent
      if (this.#firstBooted) this.warm()
      this.#lend?.(lent)
    }
    if (soonest !== Infinity) {
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

type SlotState = 'booting' | 'idle' | 'busy' | 'backoff' | 'closed'

/** One place in the pool: the worker currently in it, and what replaces it when it dies. */
class WorkerSlot {
  readonly #pool: WorkerPool
  readonly #variant: QuickJSVariantName
  readonly #warmBytes: number
  readonly #spawnWorker: (data: EngineWorkerData) => Worker
  #state: SlotState = 'booting'
  #worker: Worker | undefined
  #control = new Int32Array(new SharedArrayBuffer(4 * CONTROL_WORDS))
  #mailbox: ReplyMailbox | undefined
  #journal: LogJournal | undefined
  /** Journal bytes of the log entries the current run's host has received. */
  #loggedBytes = 0
  #host: RunHost | undefined
  #runId = 0
  /** Deaths in a row without a finished run (boot failures, crashes): sets the respawn delay. */
  #failures = 0
  #backoff: ReturnType<typeof setTimeout> | undefined
  /** The session memory the worker's engine holds in place, and the memory limit of the run that left it. */
  #resident: { id: string; memoryBytes: number } | undefined
  /** The memory limit of the run in progress. */
  #runBytes = 0
  /** The memory limit the worker's idle engine was made for (`ModuleCache.release` keeps the last run's), when known. */
  #engineBytes: number | undefined
  /** The run in progress: the CPU budget it started with and its clock base (see `runCpuMs`). */
  #runCpu: { budget: number; clockBase: number } | undefined
  /** `performance.now()` when the worker last became idle. */
  idleSince = 0
  /** The OS id of the worker's thread, when known (see `withThreadId`): what `demote` reprioritises. */
  #tid: number | undefined
  /** The thread runs at `LONG_RUN_NICE`. */
  #niced = false
  /** The thread could not be given its priority back (an unprivileged process): fresh runs go elsewhere first. */
  lowPriority = false
  spawned = 0

  constructor(
    pool: WorkerPool,
    variant: QuickJSVariantName,
    warmBytes: number,
    spawn: (data: EngineWorkerData) => Worker,
  ) {
    this.#pool = pool
    this.#variant = variant
    this.#warmBytes = warmBytes
    this.#spawnWorker = spawn
    this.#spawn()
  }

  get engineBytes(): number | undefined {
    return this.#engineBytes
  }

  /** Whether the worker's engine holds session memory `id` for runs limited to `memoryBytes` (`EngineRunOutcome.resident`). */
  holds(id: string, memoryBytes: number): boolean {
    return this.#resident?.id === id && this.#resident.memoryBytes === memoryBytes
  }

  get busy(): boolean {
    return this.#state === 'busy'
  }

  /** Booted and free: a run starts at once. */
  get idle(): boolean {
    return this.#state === 'idle'
  }

  /** Whether the worker's engine holds a session's memory (retiring it costs that session's next run a copy). */
  get resident(): boolean {
    return this.#resident !== undefined
  }

  /** The CPU the run in progress has used so far, in ms (undefined when no run is in progress). */
  runCpuMs(): number | undefined {
    const run = this.#runCpu
    if (this.#state !== 'busy' || run === undefined) return undefined
    const now = performance.timeOrigin + performance.now() - run.clockBase
    return run.budget - cpuOfWord(Atomics.load(this.#control, CPU_DEADLINE), now).ms
  }

  /** The run in progress is long and fresh runs want the cores: its thread yields them (Linux; best effort). */
  demote(): void {
    if (this.#niced || this.#tid === undefined || this.#state !== 'busy') return
    this.#niced = setThreadNice(this.#tid, LONG_RUN_NICE)
  }

  /** No fresh run wants the cores any more: the long run's thread gets its priority back, where the OS lets it. */
  promote(): void {
    if (!this.#niced || this.#tid === undefined || this.lowPriority) return
    if (setThreadNice(this.#tid, 0)) this.#niced = false
    // Unprivileged: it stays lowered; its worker is the last to take a run once this one ends.
    else this.lowPriority = true
  }

  #becomeIdle(): void {
    this.#state = 'idle'
    this.idleSince = performance.now()
    if (this.#niced && this.#tid !== undefined && !this.lowPriority) {
      if (setThreadNice(this.#tid, 0)) this.#niced = false
      else this.lowPriority = true
    }
  }

  /** The worker is gone or going: its thread id may soon name another thread. */
  #forgetThread(): void {
    this.#tid = undefined
    this.#niced = false
    this.lowPriority = false
  }

  #spawn(): void {
    this.#backoff = undefined
    if (this.#pool.disposed) {
      this.#state = 'closed'
      return
    }
    this.#state = 'booting'
    this.spawned++
    const control = new Int32Array(new SharedArrayBuffer(4 * CONTROL_WORDS))
    const mailbox = this.#pool.spinPlaces.mailbox()
    // Fresh per worker: a terminated worker may still write for a moment after the answer.
    const journal = LogJournal.memory(this.#pool.journalBytes)
    let worker: Worker
    try {
      const { wasmModule, usedPages } = this.#pool
      const data: EngineWorkerData = {
        control: control.buffer,
        mailbox,
        journal,
        variant: this.#variant,
        warmBytes: this.#warmBytes,
        ...(wasmModule !== undefined && { wasmModule }),
        ...(usedPages !== undefined && { usedPages }),
      }
      const spawned = withThreadId(() => this.#spawnWorker(data))
      worker = spawned.value
      this.#tid = spawned.tid
    } catch (error) {
      this.#worker = undefined
      this.#died(`the engine worker could not start: ${error instanceof Error ? error.message : String(error)}`)
      return
    }
    this.#worker = worker
    this.#control = control
    this.#mailbox = new ReplyMailbox(mailbox, control)
    this.#journal = new LogJournal(journal)
    worker.on('message', (m: FromWorker) => {
      if (worker === this.#worker) this.#onMessage(m)
    })
    worker.on('error', (e: Error) => {
      if (worker === this.#worker) this.#died(`the engine worker failed: ${e.message}`)
    })
    worker.on('exit', (code: number) => {
      // A worker terminated while it spun for a reply never gave its spinning place back.
      this.#pool.spinPlaces.release(mailbox)
      if (worker === this.#worker) this.#died(`the engine worker exited with code ${code}`)
    })
    // After the listeners: attaching a 'message' listener refs the worker's port again (Node 20), and an
    // idle worker referenced that way kept the process from exiting.
    worker.unref()
  }

  run(host: RunHost, input: RunInput): void {
    const worker = this.#worker
    const mailbox = this.#mailbox
    const journal = this.#journal
    if (this.#state !== 'idle' || worker === undefined || mailbox === undefined || journal === undefined) {
      throw new Error('WorkerSlot.run: the slot is not idle')
    }
    const runId = ++this.#runId
    const control = this.#control
    this.#state = 'busy'
    this.#host = host
    const budget = input.limits.cpuMs - (input.resume?.cpuMs ?? 0)
    Atomics.store(control, 0, CONTROL_NONE)
    Atomics.store(control, CPU_DEADLINE, cpuLeftWord(budget))
    const clockBase = performance.timeOrigin + performance.now()
    this.#runCpu = { budget, clockBase }
    journal.clear()
    this.#loggedBytes = 0
    worker.ref()
    // Session memory the worker holds is not sent again (a copy of it costs about 1 ms per 2 MiB).
    const id = input.session?.id
    const held = id !== undefined && this.holds(id, input.limits.memoryBytes) ? id : undefined
    this.#resident = undefined
    this.#runBytes = input.limits.memoryBytes
    // A session run's capture moves here as a transferred buffer: the worker may write it into one the host let go of.
    const spare = input.session === undefined ? undefined : this.#pool.takeSpare()
    this.#post(
      {
        t: 'run',
        runId,
        input: {
          ...input,
          ...(held !== undefined ? { session: { id: held } } : {}),
          wallRemainingMs: host.remainingMs,
          clockBase,
        },
        ...(spare !== undefined && { spare }),
      },
      spare === undefined ? undefined : [spare],
    )
    const current = (): boolean => this.#runId === runId && this.#host === host
    host.attach({
      settle: (batch, count) => {
        if (!current()) return
        if (mailbox.offer(runId, batch, count)) return
        mailbox.posting()
        this.#post({ t: 'settle', runId, batch, count })
      },
      stop: (reason) => {
        if (!current()) return
        Atomics.store(control, 0, controlOf(reason))
        this.#post({ t: 'stop', runId, reason })
        mailbox.wake()
      },
      cpu: () => cpuOfWord(Atomics.load(control, CPU_DEADLINE), performance.timeOrigin + performance.now() - clockBase),
      suspend: (parked) => {
        if (!current()) return
        // Counted as a posted message: a worker asleep on the mailbox goes to its event loop to read it.
        mailbox.posting()
        this.#post({ t: 'suspend', runId, parked })
      },
      kill: () => {
        if (!current()) return []
        // The run answers now; the thread stops within milliseconds (V8 terminates WebAssembly too)
        // and its exit is not awaited. A replacement boots right after the answer (spawning costs the
        // host thread milliseconds): this death is the watchdog's doing, not the environment's.
        this.#worker = undefined
        this.#forgetThread()
        this.#pool.terminate(worker)
        this.#host = undefined
        this.#state = 'backoff'
        setImmediate(() => this.#respawn())
        this.#pool.review()
        // What the worker accepted but had not flushed (flushes still in flight included).
        return journal.read(this.#loggedBytes)
      },
    })
  }

  #post(message: ToWorker, transfer?: ArrayBuffer[]): void {
    this.#worker?.postMessage(message, transfer)
  }

  #onMessage(m: FromWorker): void {
    if (m.t === 'ready') {
      if (this.#state !== 'booting') return
      this.#pool.usedPages ??= m.usedPages
      this.#engineBytes = this.#warmBytes
      this.#becomeIdle()
      this.#pool.startQueued()
      // The other workers boot now, unless this one took a run: then when that run ends (or another waits).
      if (this.idle) this.#pool.booted()
      return
    }
    const host = this.#host
    if (host === undefined || m.runId !== this.#runId) return
    if (m.t === 'flush') {
      for (const log of m.logs) this.#loggedBytes += journalBytes(log)
      host.flush(m.calls, m.logs)
      return
    }
    this.#failures = 0
    this.#host = undefined
    this.#resident =
      m.outcome.resident === undefined ? undefined : { id: m.outcome.resident, memoryBytes: this.#runBytes }
    this.#engineBytes = m.outcome.broken ? undefined : this.#runBytes
    if (m.outcome.session !== undefined) this.#pool.received(m.outcome.session)
    this.#becomeIdle()
    this.#worker?.unref()
    host.end(m.outcome)
    this.#pool.booted()
    this.#pool.startQueued()
    this.#pool.review()
  }

  /** The worker died on its own (boot failure, crash): its run fails, a replacement follows after a backoff. */
  #died(message: string): void {
    if (this.#state === 'closed') return
    const host = this.#host
    // The run's entries the worker accepted but had not flushed.
    const logs = host === undefined ? [] : (this.#journal?.read(this.#loggedBytes) ?? [])
    this.#host = undefined
    this.#worker = undefined
    this.#forgetThread()
    this.#failures++
    const delay = this.#failures <= 1 ? 0 : Math.min(MAX_BACKOFF_MS, FIRST_BACKOFF_MS * 2 ** (this.#failures - 2))
    const wasBusy = this.#state === 'busy'
    this.#state = 'backoff'
    if (delay === 0) setImmediate(() => this.#respawn())
    else {
      this.#backoff = setTimeout(() => this.#respawn(), delay)
      // An idle pool waiting to respawn does not keep the process alive; a waiting run's timer does.
      this.#backoff.unref()
    }
    host?.end({ logs, cpuMs: 0, subCalls: 0, broken: true, error: { kind: 'crash', message } })
    if (wasBusy) this.#pool.review()
  }

  #respawn(): void {
    if (this.#state !== 'backoff') return
    this.#spawn()
    this.#pool.startQueued()
  }

  async terminate(): Promise<void> {
    this.#state = 'closed'
    clearTimeout(this.#backoff)
    const worker = this.#worker
    this.#worker = undefined
    this.#forgetThread()
    await worker?.terminate()
  }
}
