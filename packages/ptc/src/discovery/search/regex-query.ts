import { RE2JS } from 're2js'
import { searchMessages } from './messages.js'

/** Longest pattern accepted: RE2's automaton grows with the pattern, and names are short. */
export const MAX_PATTERN_CHARS = 200

/** A compiled name pattern; matching is linear in the name's length (RE2 semantics, no backtracking). */
export interface NamePattern {
  test(name: string): boolean
}

/** Whether the query is written as a regular expression: `/pattern/` or `/pattern/flags`. */
export function isRegexQuery(query: string): boolean {
  return /^\/.+\/[a-z]*$/s.test(query)
}

/**
 * Compiles `/pattern/flags` with RE2 (linear time, whatever the pattern). Only the `i` flag is meaningful
 * for names. Throws a TypeError naming what to change.
 */
export function compileNamePattern(query: string): NamePattern {
  const end = query.lastIndexOf('/')
  const source = query.slice(1, end)
  const flags = query.slice(end + 1)
  if (source.length > MAX_PATTERN_CHARS)
    throw new TypeError(searchMessages.patternTooLong(source.length, MAX_PATTERN_CHARS))
  const unknown = [...flags].filter((flag) => flag !== 'i')
  if (unknown.length > 0) throw new TypeError(searchMessages.patternFlags(unknown.join('')))
  try {
    const re = RE2JS.compile(source, flags === '' ? 0 : RE2JS.CASE_INSENSITIVE)
    return { test: (name) => re.test(name) }
  } catch (error) {
    const detail = error instanceof Error ? error.message.replace(/^error parsing regexp: /, '') : String(error)
    throw new TypeError(searchMessages.patternInvalid(source, detail))
  }
}
