import type { ServerResponse } from 'node:http'

/** What a live session owns: closing it frees its transport and its protocol server. */
export interface SessionResources {
  close(): Promise<void>
}

interface Session<T> {
  readonly id: string
  readonly resources: T
  /** Requests of this session whose response is still open (an SSE stream counts while it is open). */
  open: number
  timer: NodeJS.Timeout | undefined
  /** When the idle timer fires (ms since the epoch), while it is armed. */
  expiresAt: number | undefined
  closed: boolean
}

/**
 * The live MCP sessions of one endpoint, with the cap and idle expiry. A session
 * is idle while none of its requests has an open response; after `idleMs` of
 * that it is closed. An initialize holds a slot from before its server is
 * created (`reserve`) until it becomes a session (`add`) or fails (`release`).
 * Timers are unref'd.
 */
export class McpSessionTable<T extends SessionResources> {
  readonly #sessions = new Map<string, Session<T>>()
  readonly #idleMs: number
  readonly #max: number
  #reserved = 0
  #closed = false

  constructor(options: { idleMs: number; max: number }) {
    this.#idleMs = options.idleMs
    this.#max = options.max
  }

  get size(): number {
    return this.#sessions.size
  }

  get reserved(): number {
    return this.#reserved
  }

  get(id: string): T | undefined {
    return this.#sessions.get(id)?.resources
  }

  /** Take a slot for an initialize; `false` at the cap (or once closed). */
  reserve(): boolean {
    if (this.#closed || this.#sessions.size + this.#reserved >= this.#max) return false
    this.#reserved++
    return true
  }

  release(): void {
    this.#reserved--
  }

  /** Turn a reserved slot into a session whose first request is `res`. After `closeAll`, closes `resources` instead. */
  add(id: string, resources: T, res: ServerResponse): void {
    this.#reserved--
    if (this.#closed) return void resources.close().catch(() => undefined)
    const session: Session<T> = { id, resources, open: 0, timer: undefined, expiresAt: undefined, closed: false }
    this.#sessions.set(id, session)
    this.track(id, res)
  }

  /** Count `res` as open on session `id` until it closes; `false` when there is no such session. */
  track(id: string, res: ServerResponse): boolean {
    const session = this.#sessions.get(id)
    if (session === undefined) return false
    session.open++
    this.#disarm(session)
    res.once('close', () => {
      session.open--
      if (session.open === 0 && !session.closed) this.#arm(session)
    })
    return true
  }

  /** Forget session `id` (its transport closed: DELETE, expiry, shutdown). */
  delete(id: string): void {
    const session = this.#sessions.get(id)
    if (session === undefined) return
    session.closed = true
    this.#disarm(session)
    this.#sessions.delete(id)
  }

  /** Seconds until a slot may free up by expiry: the soonest idle deadline, else a whole idle period. */
  retryAfterSeconds(now = Date.now()): number {
    let soonest = now + this.#idleMs
    for (const session of this.#sessions.values())
      if (session.expiresAt !== undefined && session.expiresAt < soonest) soonest = session.expiresAt
    return Math.max(1, Math.ceil((soonest - now) / 1000))
  }

  /** Close every session; later `reserve`s fail and late `add`s close their resources. */
  async closeAll(): Promise<void> {
    this.#closed = true
    const sessions = [...this.#sessions.values()]
    for (const session of sessions) this.delete(session.id)
    await Promise.all(sessions.map((s) => s.resources.close().catch(() => undefined)))
  }

  #arm(session: Session<T>): void {
    session.expiresAt = Date.now() + this.#idleMs
    session.timer = setTimeout(() => {
      this.delete(session.id)
      session.resources.close().catch(() => undefined)
    }, this.#idleMs)
    session.timer.unref()
  }

  #disarm(session: Session<T>): void {
    if (session.timer !== undefined) clearTimeout(session.timer)
    session.timer = undefined
    session.expiresAt = undefined
  }
}
