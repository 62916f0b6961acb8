import { SessionTable, type SessionEntry } from '@ptc/sandbox/backend'
import type { CodeRunSessionInfo } from '@ptc/sandbox'
import type { SessionLimits } from '@ptc/sandbox/session'
import type { Lane, RunHost, SessionPlacement } from './run-host.js'
import { ISOLATE_WAS_GONE, keeperGone, keepsState, overSessionBudget, stateDropped, stateLost } from '../messages.js'

/** A session's live isolate: kept idle between runs by the engine of `lane`, under `id`. */
interface LiveIsolate {
  readonly id: number
  readonly lane: Lane
  /** Bumped by every run that keeps the isolate: only the newest `HeldIsolate` of it may dispose it. */
  generation: number
}

/**
 * The state a `SessionTable` holds for a session: one generation of its live isolate. A run that
 * keeps the isolate gives the table a new generation, so the table dropping the one it replaces
 * (the same isolate) disposes nothing.
 */
interface HeldIsolate {
  readonly isolate: LiveIsolate
  readonly generation: number
}

/** A session taken for one run: where the run goes, and what its result will say. */
export interface SessionTicket {
  readonly key: string
  readonly entry: SessionEntry<HeldIsolate>
  readonly placement: SessionPlacement
  readonly fresh: boolean
  readonly note: string | undefined
}

/**
 * The isolated-vm backend's sandbox sessions: the bookkeeping of a `SessionTable` (one run at a
 * time, idle TTL, `maxSessions`, `maxSessionBytes`) over isolates that stay alive in their engine
 * between runs. A session run goes to the engine that keeps its isolate; a run that does not end
 * cleanly (timeout, abort, memory, crash, a log flood stopped mid-flight) disposes it, as does an
 * engine that dies; the next run then starts fresh, and its result says why.
 */
export class IsolateSessions {
  readonly #table: SessionTable<HeldIsolate>
  readonly #waitMs: number
  /** Why a session that is still in the table lost its isolate, for its next run's note. */
  readonly #lost = new Map<string, string>()
  #nextId = 1

  /** `waitMs`: `SessionStart.waitMs`. */
  constructor(limits: Readonly<SessionLimits>, waitMs: number) {
    this.#waitMs = waitMs
    this.#table = new SessionTable(limits, (held) => {
      const { isolate, generation } = held
      if (generation !== isolate.generation) return
      isolate.generation++
      isolate.lane.forget(isolate.id)
    })
  }

  get limits(): Readonly<SessionLimits> {
    return this.#table.limits
  }

  /** Takes `key`'s session for a run, or says why it cannot run now. */
  async take(key: string): Promise<({ ok: true } & SessionTicket) | { ok: false; message: string }> {
    const turn = await this.#table.take(key)
    if (!turn.ok) return turn
    const { entry } = turn
    let fresh = turn.fresh
    let note = turn.note
    const held = entry.state
    let home: LiveIsolate | undefined
    if (held !== undefined && held.isolate.lane.alive) home = held.isolate
    else if (held !== undefined) {
      this.#clear(entry)
      fresh = true
      note = stateDropped(keeperGone(held.isolate.lane.gone))
    }
    const lost = this.#lost.get(key)
    this.#lost.delete(key)
    if (fresh && note === undefined && lost !== undefined) note = stateDropped(lost)
    const placement: SessionPlacement = { id: home?.id ?? this.#nextId++, home: home?.lane, waitMs: this.#waitMs }
    return { ok: true, key, entry, placement, fresh, note }
  }

  /** Gives the session back once `run` has its result (and its engine said what became of its isolate). */
  async give(ticket: SessionTicket, run: RunHost): Promise<CodeRunSessionInfo> {
    const end = await run.sessionEnd
    const { entry, placement } = ticket
    let { fresh, note } = ticket
    const before = entry.state
    if (!end.kept) {
      if (end.intact) return this.#table.give(entry, { reason: keepsState(end.reason) }, fresh, note)
      return this.#lose(ticket, stateLost(end.reason))
    }
    if (!end.fresh) {
      // The run went on in the session's isolate: a new generation of it.
      if (before === undefined) throw new Error('a session run resumed an isolate the session did not hold')
      before.isolate.generation++
      return this.#keep(ticket, { isolate: before.isolate, generation: before.isolate.generation }, end.bytes)
    }
    if (!fresh) {
      // The session had an isolate, but the run could not reach it (its engine died meanwhile).
      fresh = true
      note ??= stateDropped(before === undefined ? ISOLATE_WAS_GONE : keeperGone(before.isolate.lane.gone))
    }
    if (before !== undefined) this.#clear(entry)
    return this.#keep(
      { ...ticket, fresh, note },
      { isolate: { id: placement.id, lane: end.lane, generation: 0 }, generation: 0 },
      end.bytes,
    )
  }

  /** Drops `key`'s session; see `CodeRuntime.endSession`. */
  end(key: string): Promise<boolean> {
    this.#lost.delete(key)
    return this.#table.end(key)
  }

  /** Drops every session (their isolates are disposed). */
  clear(): void {
    this.#table.clear()
    this.#lost.clear()
  }

  #keep(ticket: SessionTicket, held: HeldIsolate, bytes: number): CodeRunSessionInfo {
    const { entry, fresh, note } = ticket
    const max = this.#table.limits.maxSessionBytes
    if (bytes > max && !entry.ended) {
      held.isolate.generation++
      held.isolate.lane.forget(held.isolate.id)
      return this.#lose(ticket, overSessionBudget(bytes, max))
    }
    return this.#table.give(entry, { state: held, bytes }, fresh, note)
  }

  /**
   * The session's isolate is gone (disposed by its engine, or by us): the session's next run starts fresh and is told
   * `reason`.
   */
  #lose(ticket: SessionTicket, reason: string): CodeRunSessionInfo {
    const { entry, key, fresh, note } = ticket
    this.#clear(entry)
    const info = this.#table.give(entry, { reason: note === undefined ? reason : `${reason} (${note})` }, fresh)
    if (!entry.ended) {
      this.#lost.set(key, reason)
      // Bounded like the table's own notes: only the most recent reasons are remembered.
      if (this.#lost.size > 4 * this.#table.limits.maxSessions)
        this.#lost.delete(this.#lost.keys().next().value as string)
    }
    return info
  }

  /** Forgets the session's isolate without disposing it (its engine already did, or is gone). */
  #clear(entry: SessionEntry<HeldIsolate>): void {
    const held = entry.state
    if (held !== undefined && held.generation === held.isolate.generation) held.isolate.generation++
    entry.state = undefined
    entry.bytes = 0
  }
}
