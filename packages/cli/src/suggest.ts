import { closestName } from '@ptc/tools'

/** ` (did you mean "tools"?)` when a candidate is a few edits away from `word`, else `''`. */
export function suggestion(word: string, candidates: readonly string[]): string {
  const best = closestName(word, candidates)
  return best === undefined ? '' : ` (did you mean ${JSON.stringify(best)}?)`
}
