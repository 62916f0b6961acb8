import type { Scope } from '../types/scope.js'
import { chainIncludes } from './scope-chain.js'

interface Entry<L> {
  readonly listener: L
  /** Undefined: receives every call. A scope: only calls whose agent chain includes it. */
  readonly scope: Scope | undefined
}

/**
 * Ordered listeners of one event. First registered is outermost. Each `add`
 * returns its exact disposer; disposal never disturbs a dispatch in progress
 * (dispatches read a snapshot).
 */
export class ListenerList<L> {
  #entries: readonly Entry<L>[] = []

  add(listener: L, scope: Scope | undefined): () => void {
    const entry: Entry<L> = { listener, scope }
    this.#entries = [...this.#entries, entry]
    return () => {
      this.#entries = this.#entries.filter((e) => e !== entry)
    }
  }

  /** The listeners that see a call made for `agent`, in registration order. */
  for(agent: Scope | undefined): readonly L[] {
    const entries = this.#entries
    if (entries.length === 0) return []
    const out: L[] = []
    for (const e of entries) if (e.scope === undefined || chainIncludes(agent, e.scope)) out.push(e.listener)
    return out
  }

  /** Every listener, regardless of scope (unfiltered events such as `tools/change`). */
  all(): readonly L[] {
    return this.#entries.map((e) => e.listener)
  }
}
