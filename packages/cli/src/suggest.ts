/** ` (did you mean "tools"?)` when a candidate is a few edits away from `word`, else `''`. */
export function suggestion(word: string, candidates: readonly string[]): string {
  let best: string | undefined
  let bestDistance = Infinity
  for (const candidate of candidates) {
    const d = editDistance(word.toLowerCase(), candidate.toLowerCase())
    if (d < bestDistance) [best, bestDistance] = [candidate, d]
  }
  const close = best !== undefined && bestDistance <= Math.max(2, Math.floor(best.length / 3))
  return close ? ` (did you mean ${JSON.stringify(best)}?)` : ''
}

/** Levenshtein distance, two rows (words are keys: short). */
function editDistance(a: string, b: string): number {
  if (a.length > 100 || b.length > 100) return Infinity
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j)
  for (let i = 1; i <= a.length; i++) {
    const current = [i]
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1
      current.push(Math.min((previous[j] ?? 0) + 1, (current[j - 1] ?? 0) + 1, (previous[j - 1] ?? 0) + cost))
    }
    previous = current
  }
  return previous[b.length] ?? Infinity
}
