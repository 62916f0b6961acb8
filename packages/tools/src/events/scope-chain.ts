import type { Scope } from '../types/scope.js'

/** True when `scope` is `target` or one of its ancestors. */
export function chainIncludes(target: Scope | undefined, scope: Scope): boolean {
  for (let s = target; s !== undefined; s = s.parent) if (s === scope) return true
  return false
}

/** The chain from the outermost ancestor down to `scope` (empty for the global view). */
export function chainFromRoot(scope: Scope | undefined): Scope[] {
  const chain: Scope[] = []
  for (let s = scope; s !== undefined; s = s.parent) chain.push(s)
  return chain.reverse()
}
