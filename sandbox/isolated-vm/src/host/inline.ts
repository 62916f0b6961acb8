import { GUEST_PRELUDE, PROGRAM_FILENAME } from '@ptc/sandbox/backend'
import { IsolateEngine } from '../engine/engine.js'
import type { FromEngine, ToEngine } from '../engine/protocol.js'
import type { IvmModule } from '../load.js'
import type { Lane, RunHost } from './run-host.js'
import { DISPOSED, inlineNotStopped } from '../messages.js'

/**
 * How long a session run's isolate may take, after the run's answer, to be kept or disposed before
 * the lane gives up on it (the isolate is then forgotten: disposed whenever the engine gets to it).
 */
const INLINE_SESSION_GRACE_MS = 200

/**
 * `containment: 'none'`: the engine runs in this process. Fastest, but unsafe against long
 * built-ins: disposing an isolate does not stop a default `sort()` of millions of numbers or a huge
 * BigInt `toString`, which then keep a core busy long after the answer (and can make `process.exit`
 * crash), and V8 running out of memory in an isolate leaves it parked for good.
 */
export class InlineLane implements Lane {
  readonly #engine: IsolateEngine
  readonly #runs = new Map<number, RunHost>()
  /** Session runs answered whose isolate the engine has not yet kept or disposed. */
  readonly #ending = new Map<number, { run: RunHost; timer: ReturnType<typeof setTimeout> }>()
  #disposed = false

  constructor(ivm: IvmModule, warmIsolates: number, memoryBytes: number) {
    this.#engine = new IsolateEngine(
      ivm,
      { prelude: GUEST_PRELUDE, programFilename: PROGRAM_FILENAME },
      (message) => this.#receive(message),
      warmIsolates,
      memoryBytes,
    )
  }

  get alive(): boolean {
    return !this.#disposed
  }

  get gone(): string | undefined {
    return this.#disposed ? DISPOSED : undefined
  }

  /** Session isolates kept between runs (diagnostics). */
  get keptIsolates(): number {
    return this.#engine.keptIsolates
  }

  start(run: RunHost): void {
    this.#runs.set(run.id, run)
    run.attach(this)
  }

  send(_run: RunHost, message: ToEngine): void {
    this.#engine.handle(message)
  }

  release(run: RunHost, stop: boolean): void {
    if (!this.#runs.delete(run.id)) return
    if (stop) this.#engine.handle({ t: 'stop', run: run.id })
    const session = run.session
    if (session === undefined || this.#disposed) return
    const timer = setTimeout(() => {
      this.#ending.delete(run.id)
      this.forget(session.id)
      run.engineGone(inlineNotStopped(INLINE_SESSION_GRACE_MS))
    }, INLINE_SESSION_GRACE_MS)
    timer.unref()
    this.#ending.set(run.id, { run, timer })
  }

  forget(session: number): void {
    this.#engine.handle({ t: 'forget', session })
  }

  dispose(): void {
    this.#disposed = true
    this.#engine.dispose()
    for (const { run, timer } of this.#ending.values()) {
      clearTimeout(timer)
      run.engineGone(DISPOSED)
    }
    this.#ending.clear()
  }

  #receive(message: FromEngine): void {
    if (message.t === 'ready') return
    if (message.t === 'ended') {
      const ending = this.#ending.get(message.run)
      if (ending === undefined) return
      clearTimeout(ending.timer)
      this.#ending.delete(message.run)
      ending.run.engineEnded(message.kept, message.fresh)
      return
    }
    this.#runs.get(message.run)?.receive(message)
  }
}
