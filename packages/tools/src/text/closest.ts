/**
 * The candidate a few edits away from `word` (case-insensitive Levenshtein distance, at most 2 or a third of the
 * candidate's length), for a did-you-mean; undefined when none is that close. Words over 100 characters match none.
 */
export function closestName(word: string, candidates: readonly string[]): string | undefined {
  let best: string | undefined
  let bestDistance = Number.POSITIVE_INFINITY
  for (const candidate of candidates) {
    const d = editDistance(word.toLowerCase(), candidate.toLowerCase())
    if (d < bestDistance) [best, bestDistance] = [candidate, d]
  }
  return best !== undefined && bestDistance <= Math.max(2, Math.floor(best.length / 3)) ? best : undefined
}

/** Levenshtein distance, two rows (the words are names: short). */
function editDistance(a: string, b: string): number {
  if (a.length > 100 || b.length > 100) return Number.POSITIVE_INFINITY
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j)
  for (let i = 1; i <= a.length; i++) {
    const current = [i]
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1
      current.push(Math.min((previous[j] ?? 0) + 1, (current[j - 1] ?? 0) + 1, (previous[j - 1] ?? 0) + cost))
    }
    previous = current
  }
  return previous[b.length] ?? Number.POSITIVE_INFINITY
}
