import type { Worker } from 'node:worker_threads'
import type { SessionMemory } from '../engine/session-memory.js'
import type { QuickJSVariantName, WasmModule } from '../engine/module.js'
import { LogJournal, journalBytes } from '../engine/journal.js'
import { ReplyMailbox, type SpinPlaces } from '../engine/mailbox.js'
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
import type { RunHost } from './run-host.js'
import { LONG_RUN_NICE, setThreadNice, withThreadId } from './thread-priority.js'
import type { EngineWorkerData } from '../engine/worker-entry.js'

/** The first respawn delay after a worker failed without finishing a run; it doubles up to `MAX_BACKOFF_MS`. */
const FIRST_BACKOFF_MS = 100
const MAX_BACKOFF_MS = 5000

/** What a slot asks of the pool that holds it (`WorkerPool`). */
export interface SlotOwner {
  readonly disposed: boolean
  readonly journalBytes: number
  readonly spinPlaces: SpinPlaces
  /** The engine's module compiled on the host thread, and a booted engine's used page count, once known. */
  readonly wasmModule: WasmModule | undefined
  usedPages: number | undefined
  takeSpare(): ArrayBuffer | undefined
  received(memory: SessionMemory): void
  terminate(worker: Worker): void
  review(): void
  booted(): void
  startQueued(): void
}

type SlotState = 'booting' | 'idle' | 'busy' | 'backoff' | 'closed'

/** One place in the pool: the worker currently in it, and what replaces it when it dies. */
export class WorkerSlot {
  readonly #pool: SlotOwner
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
  /**
   * The memory limit the worker's idle engine was made for (`ModuleCache.release` keeps the last run's), when known.
   */
  #engineBytes: number | undefined
  /** The run in progress: the CPU budget it started with and its clock base (see `runCpuMs`). */
  #runCpu: { budget: number; clockBase: number; startedAt: number } | undefined
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
    pool: SlotOwner,
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

  /**
   * Whether the worker's engine holds session memory `id` for runs limited to `memoryBytes`
   * (`EngineRunOutcome.resident`).
   */
  holds(id: string, memoryBytes: number): boolean {
    return this.#resident?.id === id && this.#resident.memoryBytes === memoryBytes
  }

  get busy(): boolean {
    return this.#state === 'busy'
  }

  /** Starting a worker, or about to (a replacement): it wants the cores now. */
  get booting(): boolean {
    return this.#state === 'booting' || this.#state === 'backoff'
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

  /** How long the run in progress has held the worker, in ms (undefined when no run is in progress). */
  runHeldMs(): number | undefined {
    const run = this.#runCpu
    return this.#state !== 'busy' || run === undefined ? undefined : performance.now() - run.startedAt
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
    this.#runCpu = { budget, clockBase, startedAt: performance.now() }
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
