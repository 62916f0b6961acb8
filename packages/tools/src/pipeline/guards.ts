import { describeThrown } from '../errors.js'
import { chainFromRoot } from '../events/scope-chain.js'
import type { ToolGuard } from '../types/decisions.js'
import type { ToolExecution } from '../types/tool.js'
import type { Scope } from '../types/scope.js'

/** Monotonic guards: global first, then the scope chain from the outermost ancestor down to the agent. */
export class Guards {
  #global: readonly ToolGuard[] = []
  readonly #scoped = new WeakMap<Scope, readonly ToolGuard[]>()

  add(guard: ToolGuard, scope: Scope | undefined): () => void {
    if (typeof guard !== 'function') throw new TypeError('a guard must be a function')
    if (scope === undefined) this.#global = [...this.#global, guard]
    else this.#scoped.set(scope, [...(this.#scoped.get(scope) ?? []), guard])
    return () => {
      if (scope === undefined) this.#global = this.#global.filter((g) => g !== guard)
      else
        this.#scoped.set(
          scope,
          (this.#scoped.get(scope) ?? []).filter((g) => g !== guard),
        )
    }
  }

  /**
   * The first denial, or undefined. Fail-closed: a guard that throws, or
   * returns anything but `undefined` or a non-empty string, denies.
   */
  check(exec: Readonly<ToolExecution>): string | undefined {
    const first = this.#run(this.#global, exec)
    if (first !== undefined || exec.agent === undefined) return first
    for (const scope of chainFromRoot(exec.agent)) {
      const list = this.#scoped.get(scope)
      const reason = list === undefined ? undefined : this.#run(list, exec)
      if (reason !== undefined) return reason
    }
    return undefined
  }

  #run(guards: readonly ToolGuard[], exec: Readonly<ToolExecution>): string | undefined {
    for (const guard of guards) {
      let reason: unknown
      try {
        reason = guard(exec)
      } catch (error) {
        return `a guard failed: ${describeThrown(error)}`
      }
      if (reason === undefined) continue
      return typeof reason === 'string' && reason !== '' ? reason : 'denied by a guard'
    }
    return undefined
  }
}
