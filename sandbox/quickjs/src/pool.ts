import type { Worker } from 'node:worker_threads'
import type { QuickJSVariantName } from './engine/module.js'
import { ReplyMailbox, newMailboxMemory } from './engine/mailbox.js'
import { Control, type FromWorker, type SessionInput, type ToWorker } from './engine/protocol.js'
import type { Executor } from './executor.js'
import type { RunHost } from './host/run-host.js'
import { spawnEngineWorker } from './spawn.js'

interface Job {
  host: RunHost
  input: SessionInput
}

/**
 * Worker isolation: a fixed number of worker threads, one run each at a time, FIFO queue. Each worker
 * shares a control word with the host (abort/wall reach a busy guest through the interrupt handler);
 * the host's watchdog terminates a worker that does not stop and a fresh one replaces it.
 */
export class WorkerPool implements Executor {
  readonly #size: number
  readonly #variant: QuickJSVariantName
  readonly #warmBytes: number
  readonly #slots: WorkerSlot[] = []
  readonly #queue: Job[] = []
  #disposed = false

  constructor(size: number, variant: QuickJSVariantName, warmBytes: number) {
    this.#size = Math.max(1, Math.floor(size))
    this.#variant = variant
    this.#warmBytes = warmBytes
  }

  execute(host: RunHost, input: SessionInput): void {
    this.#queue.push({ host, input })
    this.drain()
  }

  /** Starts queued jobs on free workers (spawning up to the pool size). */
  drain(): void {
    while (!this.#disposed && this.#queue.length > 0) {
      const job = this.#queue[0] as Job
      if (job.host.ended) {
        this.#queue.shift()
        continue
      }
      const slot = this.#slots.find((s) => s.ready && !s.busy)
      if (slot === undefined) {
        // Jobs wait for a free worker; spawn workers (up to the pool size) for jobs no booting worker covers.
        let booting = this.#slots.filter((s) => !s.ready).length
        while (booting < this.#queue.length && this.#slots.length < this.#size) {
          this.#slots.push(new WorkerSlot(this, this.#variant, this.#warmBytes))
          booting++
        }
        return
      }
      this.#queue.shift()
      slot.run(job.host, job.input)
    }
  }

  get workers(): number {
    return this.#slots.length
  }

  async dispose(): Promise<void> {
    this.#disposed = true
    this.#queue.length = 0
    await Promise.all(this.#slots.map((s) => s.terminate()))
    this.#slots.length = 0
  }
}

class WorkerSlot {
  readonly #pool: WorkerPool
  readonly #variant: QuickJSVariantName
  readonly #warmBytes: number
  #worker!: Worker
  #control!: Int32Array
  #mailbox!: ReplyMailbox
  #host: RunHost | undefined
  #runId = 0
  #closing = false
  #ready = false

  constructor(pool: WorkerPool, variant: QuickJSVariantName, warmBytes: number) {
    this.#pool = pool
    this.#variant = variant
    this.#warmBytes = warmBytes
    this.#spawn()
  }

  get busy(): boolean {
    return this.#host !== undefined
  }

  /** The worker booted and loaded its module: runs start at once, so the wall clock is fair. */
  get ready(): boolean {
    return this.#ready
  }

  #spawn(): void {
    const control = new Int32Array(new SharedArrayBuffer(4))
    const mailbox = newMailboxMemory()
    const worker = spawnEngineWorker({ control: control.buffer, mailbox, variant: this.#variant, warmBytes: this.#warmBytes })
    this.#worker = worker
    this.#control = control
    this.#mailbox = new ReplyMailbox(mailbox, control)
    this.#ready = false
    worker.unref()
    worker.on('message', (m: FromWorker) => {
      if (worker === this.#worker) this.#onMessage(m)
    })
    worker.on('error', (e: Error) => {
      if (worker === this.#worker) this.#onExit(`the engine worker failed: ${e.message}`)
    })
    worker.on('exit', (code: number) => {
      if (worker === this.#worker) this.#onExit(`the engine worker exited with code ${code}`)
    })
  }

  run(host: RunHost, input: SessionInput): void {
    const runId = ++this.#runId
    this.#host = host
    Atomics.store(this.#control, 0, Control.None)
    this.#worker.ref()
    this.#post({ t: 'run', runId, input })
    host.attach({
      settle: (batch, count) => {
        if (this.#runId !== runId) return
        if (!this.#mailbox.offer(runId, batch, count)) this.#post({ t: 'settle', runId, batch, count })
      },
      stop: (reason) => {
        if (this.#runId !== runId || this.#host === undefined) return
        Atomics.store(this.#control, 0, reason === 'abort' ? Control.Abort : Control.Wall)
        this.#post({ t: 'stop', runId, reason })
      },
      kill: () => {
        if (this.#runId !== runId || this.#host === undefined) return
        void this.#worker.terminate()
        this.#spawn()
        this.#release()
      },
    })
  }

  #post(message: ToWorker): void {
    this.#worker.postMessage(message)
  }

  #onMessage(m: FromWorker): void {
    if (m.t === 'ready') {
      this.#ready = true
      this.#pool.drain()
      return
    }
    const host = this.#host
    if (host === undefined || m.runId !== this.#runId) return
    if (m.t === 'flush') {
      host.flush(m.calls, m.logs)
      return
    }
    this.#release()
    host.end(m.outcome)
  }

  #onExit(message: string): void {
    if (this.#closing) return
    const host = this.#host
    this.#spawn()
    this.#release()
    host?.end({ logs: [], cpuMs: 0, subCalls: 0, broken: true, error: { kind: 'crash', message } })
  }

  #release(): void {
    this.#host = undefined
    this.#worker.unref()
    this.#pool.drain()
  }

  async terminate(): Promise<void> {
    this.#closing = true
    await this.#worker.terminate()
  }
}
