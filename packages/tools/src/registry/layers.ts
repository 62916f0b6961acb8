import { ToolRegistrationError } from '../errors.js'
import { chainIncludes } from '../events/scope-chain.js'
import type { Scope } from '../types/scope.js'
import { admits, type CompiledRestriction } from './restriction.js'
import type { Registration } from './registration.js'

/**
 * Registration layers (global + one per scope), restrictions and shadowing.
 * A name resolves to the nearest layer on the scope chain that has it; an
 * inherited registration is filtered by the restrictions declared on every
 * scope below its layer; a scope's own registrations are never filtered.
 */
export class Layers {
  readonly #global = new Map<string, Registration>()
  readonly #scoped = new WeakMap<Scope, Map<string, Registration>>()
  readonly #restrictions = new WeakMap<Scope, readonly CompiledRestriction[]>()
  /** Every live registration, for whole-view listings (kept in registration order). */
  readonly #all = new Set<Registration>()

  add(reg: Registration): () => void {
    const layer = this.#layer(reg.scope, true)
    if (layer.has(reg.name)) {
      const where = reg.scope === undefined ? 'the global layer' : `scope ${JSON.stringify(reg.scope.id)}`
      throw new ToolRegistrationError(`tool ${JSON.stringify(reg.name)} is already registered in ${where}`)
    }
    layer.set(reg.name, reg)
    this.#all.add(reg)
    return () => {
      if (!reg.alive) return
      reg.alive = false
      if (layer.get(reg.name) === reg) layer.delete(reg.name)
      this.#all.delete(reg)
    }
  }

  /** Whether any layer holds a live registration of `name`. */
  hasAnywhere(name: string): boolean {
    for (const reg of this.#all) if (reg.name === name) return true
    return false
  }

  restrict(scope: Scope, restriction: CompiledRestriction): () => void {
    this.#restrictions.set(scope, [...(this.#restrictions.get(scope) ?? []), restriction])
    return () => {
      const list = this.#restrictions.get(scope)
      if (list !== undefined)
        this.#restrictions.set(
          scope,
          list.filter((r) => r !== restriction),
        )
    }
  }

  /** Registered in exactly this scope's own layer (undefined: global). */
  isLocal(scope: Scope | undefined, name: string): boolean {
    return this.#layer(scope, false)?.has(name) ?? false
  }

  /** Registered in an ancestor's layer or the global layer. */
  isInherited(scope: Scope, name: string): boolean {
    for (let s = scope.parent; s !== undefined; s = s.parent) if (this.#scoped.get(s)?.has(name) === true) return true
    return this.#global.has(name)
  }

  /** The registration `scope` sees for `name`, after shadowing and restrictions. */
  lookup(name: string, scope: Scope | undefined): Registration | undefined {
    let below: CompiledRestriction[] | undefined
    for (let s = scope; s !== undefined; s = s.parent) {
      const reg = this.#scoped.get(s)?.get(name)
      if (reg !== undefined) return below === undefined || passes(below, name) ? reg : undefined
      const own = this.#restrictions.get(s)
      if (own !== undefined && own.length > 0) (below ??= []).push(...own)
    }
    const reg = this.#global.get(name)
    return reg !== undefined && (below === undefined || passes(below, name)) ? reg : undefined
  }

  /** Every registration `scope` sees, in registration order. */
  visible(scope: Scope | undefined): Registration[] {
    const names = new Set<string>()
    for (const reg of this.#all) if (reg.scope === undefined || chainIncludes(scope, reg.scope)) names.add(reg.name)
    const out: Registration[] = []
    for (const name of names) {
      const reg = this.lookup(name, scope)
      if (reg !== undefined) out.push(reg)
    }
    return out.sort((a, b) => a.id - b.id)
  }

  #layer(scope: Scope | undefined, create: true): Map<string, Registration>
  #layer(scope: Scope | undefined, create: false): Map<string, Registration> | undefined
  #layer(scope: Scope | undefined, create: boolean): Map<string, Registration> | undefined {
    if (scope === undefined) return this.#global
    let layer = this.#scoped.get(scope)
    if (layer === undefined && create) this.#scoped.set(scope, (layer = new Map()))
    return layer
  }
}

function passes(restrictions: readonly CompiledRestriction[], name: string): boolean {
  for (const r of restrictions) if (!admits(r, name)) return false
  return true
}
