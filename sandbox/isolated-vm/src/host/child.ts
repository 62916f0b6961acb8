import { fork } from 'node:child_process'
import type { ChildProcess } from 'node:child_process'
import { createRequire } from 'node:module'
import { fileURLToPath, pathToFileURL } from 'node:url'
import type { ChildConfig } from '../engine/child-entry.js'
import type { FromEngine, ToEngine } from '../engine/protocol.js'
import { busyThreads, processCpuMs, threadCpuMs } from './hot-threads.js'
import type { Lane, RunHost } from './run-host.js'
import {
  engineDied,
  engineGone,
  exited,
  killed,
  lostAnIsolate,
  notStopped,
  STOPPED_READING,
  unreadableMessage,
} from '../messages.js'

/** The last bytes of a child's stderr kept for crash messages (V8's out-of-memory dump lands here). */
const STDERR_TAIL_BYTES = 4096

/**
 * How long past a run's answer a child that is not running may take to confirm it ended (see `release`): on a
 * loaded machine a child can wait for a core longer than the grace, and killing it then lost the sessions it kept.
 */
const MAX_STARVED_MS = 5000

/** What a pool learns from one of its children. */
export interface ChildOwner {
  /** The child loaded isolated-vm and takes runs. */
  ready(child: EngineChild): void
  /** A place in the child freed (a run ended there). */
  freed(child: EngineChild): void
  /**
   * A run the child hosts has answered (its place frees once the child confirms it stopped): a place it lent while
   * it was long is taken back now, before the runtime's gate gives the run's own place to the next run. `stopping`:
   * the child was told to stop the run, and must confirm within its grace.
   */
  answered(child: EngineChild, stopping: boolean): void
  /**
   * The child's process is gone; `started`: it had become ready first. `orphans`: runs it was given but
   * never started (see `EngineChild`'s exit), to place again.
   */
  exited(child: EngineChild, started: boolean, orphans: RunHost[]): void
}

/**
 * How an engine child is started. Built (`dist/`): `child-entry.js` beside this module. From source
 * (this module's URL ends in `.ts`, as under vitest): `engine/child-entry.ts` through tsx's ESM
 * loader, with `--conditions=@ptc/source` so workspace packages resolve to their sources.
 */
export interface ChildCommand {
  entry: string
  execArgv: string[]
}

export function childCommand(): ChildCommand {
  const here = import.meta.url
  if (!here.endsWith('.ts'))
    return { entry: fileURLToPath(new URL('./child-entry.js', here)), execArgv: ['--no-node-snapshot'] }
  const tsx = pathToFileURL(createRequire(here).resolve('tsx/esm')).href
  return {
    entry: fileURLToPath(new URL('../engine/child-entry.ts', here)),
    execArgv: ['--no-node-snapshot', '--conditions=@ptc/source', '--import', tsx],
  }
}

/**
 * One engine child process and the runs it hosts. The child gets an empty environment, its config
 * as JSON and, per run, JSON messages; stdout is dropped and stderr kept (only its tail, for crash
 * messages). The process and its channel are unreferenced: an idle pool never keeps the host alive
 * (a live run does, through its wall timer). After a run's answer the child must confirm within
 * `graceMs` that nothing of the run still runs (`ended`), or the whole child is killed.
 */
export class EngineChild implements Lane {
  readonly #owner: ChildOwner
  readonly #graceMs: number
  readonly #proc: ChildProcess
  /** Runs with no answer yet. */
  readonly #runs = new Map<number, RunHost>()
  /** Runs answered and not yet confirmed `ended`: each still holds an isolate in the child. */
  readonly #ending = new Map<number, { timer: ReturnType<typeof setTimeout>; run: RunHost }>()
  /** Of those, the runs the host stopped (the guest may be inside a built-in that ignores it). */
  readonly #stopping = new Set<number>()
  #stderr = ''
  #ready = false
  #exited = false
  #killReason: string | undefined
  /**
   * Whether this host killed the child on purpose (a run that did not stop, a lost isolate, disposal), not over a
   * broken channel.
   */
  #killedOnPurpose = false
  /** Runs the child has sent something about: they started there. */
  readonly #heard = new Set<number>()
  #exitReason = 'it exited'
  /** Session isolates the child keeps idle, by session number. */
  readonly #kept = new Set<number>()

  constructor(owner: ChildOwner, config: ChildConfig, graceMs: number, command: ChildCommand = childCommand()) {
    this.#owner = owner
    this.#graceMs = graceMs
    const { entry, execArgv } = command
    this.#proc = fork(entry, [JSON.stringify(config)], {
      execArgv,
      // Nothing of the host's environment; the zone the guest's Dates see is UTC, not the machine's
      // (/etc/localtime), as on QuickJS.
      env: { TZ: 'UTC' },
      stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
      serialization: 'json',
    })
    this.#proc.unref()
    this.#proc.channel?.unref()
    this.#proc.stderr?.setEncoding('utf8')
    this.#proc.stderr?.on('data', (chunk: string) => {
      this.#stderr = (this.#stderr + chunk).slice(-STDERR_TAIL_BYTES)
    })
    // The pipe is a socket: unreferenced, it never keeps this process alive on its own.
    ;(this.#proc.stderr as { unref?: () => void } | null)?.unref?.()
    this.#proc.on('message', (batch: unknown) => this.#receive(batch))
    this.#proc.on('error', () => {
      // Never started (fork failed): no 'exit' follows.
      if (this.#proc.pid === undefined) this.#onExit(null, null)
      // (A message sent to a child that died meanwhile fails this way too.)
      else this.kill('the engine process failed', false)
    })
    this.#proc.on('exit', (code, signal) => this.#onExit(code, signal))
  }

  get pid(): number | undefined {
    return this.#exited ? undefined : this.#proc.pid
  }

  get ready(): boolean {
    return this.#ready && !this.#exited && this.#killReason === undefined
  }

  /** Not killed nor exited: the session isolates the child keeps are still there. */
  get alive(): boolean {
    return !this.#exited && this.#killReason === undefined
  }

  get gone(): string | undefined {
    if (this.#killReason !== undefined) return killed(this.#killReason)
    return this.#exited ? this.#exitReason : undefined
  }

  /**
   * A run the host stopped has not confirmed its end yet: within the grace this child is either
   * cleared or killed, so new runs should not go here meanwhile.
   */
  get suspect(): boolean {
    return this.#stopping.size > 0
  }

  /** Places in use: runs live, and runs answered whose isolate the child has not confirmed gone. */
  get load(): number {
    return this.#runs.size + this.#ending.size
  }

  /** Session isolates the child keeps between their runs. */
  get keptSessions(): number {
    return this.#kept.size
  }

  start(run: RunHost): void {
    this.#runs.set(run.id, run)
    if (run.session !== undefined) this.#kept.delete(run.session.id)
    run.attach(this)
  }

  send(_run: RunHost, message: ToEngine): void {
    this.#post(message)
  }

  forget(session: number): void {
    this.#kept.delete(session)
    this.#post({ t: 'forget', session })
  }

  #post(message: ToEngine): void {
    if (this.#exited || this.#killReason !== undefined || !this.#proc.connected) return
    try {
      this.#proc.send(message)
    } catch {
      this.kill(STOPPED_READING, false)
    }
  }

  release(run: RunHost, stop: boolean): void {
    if (!this.#runs.delete(run.id)) return
    this.#heard.delete(run.id)
    if (this.#exited) return
    if (stop) {
      this.send(run, { t: 'stop', run: run.id })
      this.#stopping.add(run.id)
    }
    // The CPU the process had used at the answer: as it said in the answer, else (the host stopped the run) from /proc
    // (which reads up to 20 ms lower: user and system time each cut to ticks; the first grace may then be renewed
    // once).
    this.#ending.set(run.id, {
      timer: this.#graceTimer(run.id, run.engineCpuMs ?? processCpuMs(this.#proc.pid), performance.now()),
      run,
    })
    this.#owner.answered(this, stop)
  }

  /**
   * Kills the child when run `id` has not ended `graceMs` after its answer, unless nothing shows that the run still
   * computes; then the child gets another grace, up to `MAX_STARVED_MS` after the answer. A child that used less than
   * a quarter of the grace in CPU did not run (a machine whose cores are taken). A child that did run but hosts other
   * runs may have spent that CPU on them while the thread that must end this run waited for a core: it is killed only
   * when more of its threads kept running through a grace than it hosts runs still in progress.
   */
  #graceTimer(id: number, cpuMs: number | undefined, answeredAt: number, threads?: Map<number, number>) {
    const timer = setTimeout(() => {
      const ending = this.#ending.get(id)
      const pid = this.#proc.pid
      if (ending === undefined || this.#exited || pid === undefined) return
      const now = processCpuMs(pid)
      const inTime = performance.now() - answeredAt < MAX_STARVED_MS
      const idle = cpuMs !== undefined && now !== undefined && now - cpuMs < this.#graceMs / 4
      let seen: Map<number, number> | undefined
      let slow = inTime && idle
      if (inTime && !idle && this.#runs.size > 0) {
        seen = threadCpuMs(pid)
        // The first look only sets the baseline.
        slow = threads === undefined || busyThreads(pid, threads, seen, this.#graceMs / 4) <= this.#runs.size
      }
      if (slow) ending.timer = this.#graceTimer(id, now, answeredAt, seen)
      else this.kill(notStopped(this.#graceMs))
    }, this.#graceMs)
    timer.unref()
    return timer
  }

  /**
   * Kills the process now (SIGKILL): every run it still hosts fails as `crash`. `onPurpose` false: over a
   * broken channel, which a child killed from outside also gives (see `#onExit`).
   */
  kill(reason: string, onPurpose = true): void {
    if (this.#exited) return
    this.#killReason ??= reason
    if (onPurpose) this.#killedOnPurpose = true
    this.#proc.kill('SIGKILL')
  }

  /** Resolves once the process is gone. */
  whenExited(): Promise<void> {
    if (this.#exited || this.#proc.exitCode !== null || this.#proc.signalCode !== null) return Promise.resolve()
    // Referenced while someone waits: `await runtime.dispose()` returns before the process may exit.
    this.#proc.ref()
    return new Promise((resolve) => this.#proc.once('exit', () => resolve()))
  }

  /**
   * A batch of messages from the engine process. One this host cannot read (not a batch of messages, or a
   * message whose handling throws) comes only from a broken or compromised engine, whose isolates this host
   * cannot trust any more: the child is killed (its runs fail as `crash`), never this process.
   */
  #receive(batch: unknown): void {
    try {
      this.#read(batch)
    } catch (error) {
      this.kill(unreadableMessage(error instanceof Error ? error.message : String(error)))
    }
  }

  #read(batch: unknown): void {
    if (!Array.isArray(batch)) throw new TypeError('not a batch of messages')
    for (const message of batch as FromEngine[]) {
      if (this.#exited) return
      if (typeof message !== 'object' || message === null || typeof (message as { t?: unknown }).t !== 'string')
        throw new TypeError('not a message')
      switch (message.t) {
        case 'ready':
          this.#ready = true
          this.#owner.ready(this)
          break
        case 'ended': {
          const ending = this.#ending.get(message.run)
          if (ending === undefined) break
          clearTimeout(ending.timer)
          this.#ending.delete(message.run)
          this.#stopping.delete(message.run)
          const kept = typeof message.kept === 'number' ? message.kept : undefined
          const session = ending.run.session
          if (kept !== undefined && session !== undefined) this.#kept.add(session.id)
          ending.run.engineEnded(kept, message.fresh)
          this.#owner.freed(this)
          break
        }
        case 'catastrophe':
          // isolated-vm parked the isolate's thread for good (V8 out of memory): the run gets its
          // answer, the child goes.
          this.#runs.get(message.run)?.receive(message)
          this.kill(lostAnIsolate(message.message))
          break
        default: {
          const run = this.#runs.get(message.run)
          if (run === undefined) break
          this.#heard.add(message.run)
          run.receive(message)
        }
      }
    }
  }

  #onExit(code: number | null, signal: NodeJS.Signals | null): void {
    if (this.#exited) return
    this.#exited = true
    const how = signal !== null ? `signal ${signal}` : `exit code ${String(code)}`
    const why = this.#killReason !== undefined ? killed(this.#killReason) : exited(how)
    this.#exitReason = why
    const ending = [...this.#ending.values()]
    this.#ending.clear()
    this.#stopping.clear()
    for (const { timer, run } of ending) {
      clearTimeout(timer)
      run.engineGone(engineGone(why))
    }
    const oom = this.#killReason === undefined && /out of memory|heap limit|allocation failed/i.test(this.#stderr)
    const tail = this.#stderr.trim().split('\n').slice(-3).join(' | ')
    const message = engineDied(why, oom ? '' : tail)
    // Killed from outside (SIGKILL, not by this host on purpose: the OOM killer, an operator), the child took
    // with it the runs it had been given but had sent nothing about: placed on it after it died, before its
    // exit reached this host, or just before. They never started, so each goes to another child — once: a
    // run whose program did bring the kill about (memory the kernel refused) takes down at most one more.
    const external = signal === 'SIGKILL' && !this.#killedOnPurpose
    const orphans: RunHost[] = []
    const runs: RunHost[] = []
    for (const run of this.#runs.values()) {
      if (external && !this.#heard.has(run.id) && run.requeue()) orphans.push(run)
      else runs.push(run)
    }
    this.#runs.clear()
    this.#heard.clear()
    // V8's own out-of-memory end (its dump on stderr) is the memory failure of a run alone in the
    // child; co-tenants cannot be told apart from the culprit and fail as crash.
    const kind = oom && runs.length === 1 ? 'memory' : 'crash'
    for (const run of runs) run.lost(message, kind)
    this.#owner.exited(this, this.#ready, orphans)
  }
}
