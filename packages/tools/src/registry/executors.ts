import type { ToolExecutor } from '../types/executor.js'
import type { Scope } from '../types/scope.js'

/**
 * Executor selection: per scope, nearest on the chain, else the deployment
 * default. Disposing a selection leaves it unavailable (`null`) until it is
 * replaced: a scope never silently falls back to another mode.
 */
export class ExecutorSelection {
  #default: ToolExecutor | null
  readonly #scoped = new WeakMap<Scope, ToolExecutor | null>()

  constructor(initial: ToolExecutor) {
    this.#default = initial
  }

  /** Names reserved by installed executors' built-in tools, each with how many installations hold it. */
  readonly #reserved = new Map<string, number>()

  /** The names currently reserved by an installed executor's built-in tools. */
  reserved(): ReadonlySet<string> {
    return new Set(this.#reserved.keys())
  }

  set(executor: ToolExecutor, scope: Scope | undefined): () => void {
    if (
      typeof executor !== 'object' ||
      executor === null ||
      typeof executor.execute !== 'function' ||
      typeof executor.describe !== 'function'
    ) {
      throw new TypeError('an executor must be an object with describe() and execute()')
    }
    if (scope === undefined) this.#default = executor
    else this.#scoped.set(scope, executor)
    const names = executor.builtins?.names ?? []
    for (const name of names) this.#reserved.set(name, (this.#reserved.get(name) ?? 0) + 1)
    let disposed = false
    return () => {
      if (disposed) return
      disposed = true
      for (const name of names) {
        const held = (this.#reserved.get(name) ?? 1) - 1
        if (held === 0) this.#reserved.delete(name)
        else this.#reserved.set(name, held)
      }
      if (scope === undefined) {
        if (this.#default === executor) this.#default = null
      } else if (this.#scoped.get(scope) === executor) this.#scoped.set(scope, null)
    }
  }

  /** The executor for calls of `agent`, or null when the selection is unavailable. */
  select(agent: Scope | undefined): ToolExecutor | null {
    for (let s = agent; s !== undefined; s = s.parent) {
      const chosen = this.#scoped.get(s)
      if (chosen !== undefined) return chosen
    }
    return this.#default
  }
}
