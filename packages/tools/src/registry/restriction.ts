import { ToolRestrictionError } from '../errors.js'
import type { ToolRestriction } from '../types/tool.js'
import { RUN_CODE } from './registration.js'

/** A restriction compiled to private sets. */
export interface CompiledRestriction {
  readonly allow: ReadonlySet<string> | undefined
  readonly deny: ReadonlySet<string> | undefined
}

/** True when the restriction lets `name` through. */
export function admits(r: CompiledRestriction, name: string): boolean {
  return (r.allow === undefined || r.allow.has(name)) && (r.deny === undefined || !r.deny.has(name))
}

/**
 * Validate and compile a filter. `isLocal(name)`: registered in the scope
 * itself; `isInherited(name)`: registered in an ancestor or the global layer.
 */
export function compileRestriction(
  filter: ToolRestriction,
  isLocal: (name: string) => boolean,
  isInherited: (name: string) => boolean,
): CompiledRestriction {
  if (typeof filter !== 'object' || filter === null)
    throw new ToolRestrictionError('a restriction must be an object { allow?, deny? }')
  const problems: string[] = []
  const compile = (key: 'allow' | 'deny'): ReadonlySet<string> | undefined => {
    const list: unknown = filter[key]
    if (list === undefined) return undefined
    if (!Array.isArray(list) || list.length === 0) {
      problems.push(`\`${key}\` must be a non-empty array of tool names`)
      return undefined
    }
    for (const name of list) {
      if (typeof name !== 'string') problems.push(`\`${key}\` contains a non-string entry`)
      else if (name === RUN_CODE)
        problems.push(`\`${key}\`: run_code is the reserved transport and cannot be restricted`)
      else if (isLocal(name))
        problems.push(
          `\`${key}\`: ${JSON.stringify(name)} is registered in this scope; its own registrations are never filtered`,
        )
      else if (!isInherited(name)) problems.push(`\`${key}\`: unknown tool ${JSON.stringify(name)}`)
    }
    return new Set(list as string[])
  }
  const allow = compile('allow')
  const deny = compile('deny')
  if (filter.allow === undefined && filter.deny === undefined)
    problems.push('an empty restriction filters nothing: give `allow` or `deny`')
  if (problems.length > 0) throw new ToolRestrictionError(`invalid restriction: ${problems.join('; ')}`)
  return { allow, deny }
}
