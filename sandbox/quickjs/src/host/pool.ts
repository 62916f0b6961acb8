import { availableParallelism } from 'node:os'
import type { Worker } from 'node:worker_threads'
import type { SessionMemory } from '../engine/image.js'
import { compile, type QuickJSVariantName, type WasmModule } from '../engine/module.js'
import { LogJournal, journalBytes } from '../engine/journal.js'
import { ReplyMailbox, SpinPlaces } from '../engine/mailbox.js'
import { CONTROL_NONE, CONTROL_WORDS, CPU_DEADLINE, controlOf, cpuLeftWord, cpuOfWord, type FromWorker, type RunInput, type ToWorker } from '../engine/protocol.js'
import type { Engines } from './engines.js'
import type { RunHost } from './run-host.js'
import { spawnEngineWorker } from './spawn.js'
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
}

/** The first respawn delay after a worker failed without finishing a run; it doubles up to `MAX_BACKOFF_MS`. */
const FIRST_BACKOFF_MS = 100
const MAX_BACKOFF_MS = 5000
/** Buffers of let-go session memories kept for the workers' captures, and the largest kept (as `offerSpare`). */
const MAX_HOST_SPARES = 8
const MAX_SPARE_BYTES = 1024 * 1024
/** The largest log journal a worker gets (shared memory, committed as it is written). */
export const MAX_JOURNAL_BYTES = 16 * 1024 * 1024

/**
 * Worker isolation: a fixed number of worker threads (booted with the first run, or when the runtime is
 * created: the first alone, the others once it is up; see `warm`), one run each at
 * a time, FIFO queue (the runtime's `RunGate` admits at most one run per worker by default, so this
 * queue mostly holds runs waiting for a worker that boots or is being replaced). Each worker shares a
 * control word with the host (abort and wall reach a busy guest through the interrupt handler); the
 * host's watchdog terminates a worker that does not stop, and a fresh one replaces it at once. A worker that dies before it finished a run
 * (failed to boot, crashed) is replaced after a delay that doubles with each such death in a row, so a
 * broken environment cannot make the pool respawn in a tight loop; runs waiting meanwhile still end at
 * their own deadline (their `RunHost` timer). Workers are unreferenced while idle: an idle pool does
 * not keep the process alive, a pending run does (its deadline timer, and its worker while it runs).
 */
export class WorkerPool implements Engines {
  readonly #size: number
  readonly #variant: QuickJSVariantName
  readonly #warmBytes: number
  readonly #journalBytes: number
  readonly #spawn: (data: EngineWorkerData) => Worker
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
    const target = this.#firstBooted ? this.#size : 1
    while (this.#slots.length < target) this.#slots.push(new WorkerSlot(this, this.#variant, this.#warmBytes, this.#spawn))
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
        this.#slots.find((s) => s.idle && s.engineBytes === bytes) ??
        this.#slots.find((s) => s.idle)
      // Jobs wait for a free worker (one that boots, or one whose run ends); the first to wait for a busy
      // worker has the others boot.
      if (slot === undefined) {
        if (this.#slots.some((s) => s.busy)) this.booted()
        return
      }
      this.#queue.shift()
      slot.run(job.host, job.input)
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

  /** Worker slots (each holds a live, booting or about-to-respawn worker); stays at most the pool size. */
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
    return this.#slots.reduce((n, s) => n + s.spawned, 0)
  }

  async dispose(): Promise<void> {
    this.#disposed = true
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
  spawned = 0

  constructor(pool: WorkerPool, variant: QuickJSVariantName, warmBytes: number, spawn: (data: EngineWorkerData) => Worker) {
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
      worker = this.#spawnWorker(data)
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
    Atomics.store(control, 0, CONTROL_NONE)
    Atomics.store(control, CPU_DEADLINE, cpuLeftWord(input.limits.cpuMs - (input.resume?.cpuMs ?? 0)))
    const clockBase = performance.timeOrigin + performance.now()
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
      { t: 'run', runId, input: { ...input, ...(held !== undefined ? { session: { id: held } } : {}), wallRemainingMs: host.remainingMs, clockBase }, ...(spare !== undefined && { spare }) },
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
        this.#pool.terminate(worker)
        this.#host = undefined
        this.#state = 'backoff'
        setImmediate(() => this.#respawn())
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
      this.#state = 'idle'
      this.#pool.startQueued()
      // The other workers boot now, unless this one took a run: then when that run ends (or another waits).
      if (this.#state === 'idle') this.#pool.booted()
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
    this.#resident = m.outcome.resident === undefined ? undefined : { id: m.outcome.resident, memoryBytes: this.#runBytes }
    this.#engineBytes = m.outcome.broken ? undefined : this.#runBytes
    if (m.outcome.session !== undefined) this.#pool.received(m.outcome.session)
    this.#state = 'idle'
    this.#worker?.unref()
    host.end(m.outcome)
    this.#pool.booted()
    this.#pool.startQueued()
  }

  /** The worker died on its own (boot failure, crash): its run fails, a replacement follows after a backoff. */
  #died(message: string): void {
    if (this.#state === 'closed') return
    const host = this.#host
    // The run's entries the worker accepted but had not flushed.
    const logs = host === undefined ? [] : (this.#journal?.read(this.#loggedBytes) ?? [])
    this.#host = undefined
    this.#worker = undefined
    this.#failures++
    const delay = this.#failures <= 1 ? 0 : Math.min(MAX_BACKOFF_MS, FIRST_BACKOFF_MS * 2 ** (this.#failures - 2))
    this.#state = 'backoff'
    if (delay === 0) setImmediate(() => this.#respawn())
    else {
      this.#backoff = setTimeout(() => this.#respawn(), delay)
      // An idle pool waiting to respawn does not keep the process alive; a waiting run's timer does.
      this.#backoff.unref()
    }
    host?.end({ logs, cpuMs: 0, subCalls: 0, broken: true, error: { kind: 'crash', message } })
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
    await worker?.terminate()
  }
}
