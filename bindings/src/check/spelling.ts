/**
 * Edit distance where a change of case costs 0.1, or undefined past `max`. The same arithmetic, in the same
 * order, as TypeScript's own, so ties resolve the same way.
 */
function distanceWithin(a: string, b: string, max: number): number | undefined {
  let previous: number[] = Array.from({ length: b.length + 1 }, (_, i) => i)
  let current: number[] = new Array<number>(b.length + 1).fill(0)
  const big = max + 0.01
  for (let i = 1; i <= a.length; i++) {
    const lower = (a[i - 1] as string).toLowerCase()
    const minJ = Math.ceil(i > max ? i - max : 1)
    const maxJ = Math.floor(b.length > max + i ? max + i : b.length)
    current[0] = i
    let columnMin = i
    for (let j = 1; j < minJ; j++) current[j] = big
    for (let j = minJ; j <= maxJ; j++) {
      const diagonal = previous[j - 1] as number
      const substitute = lower === (b[j - 1] as string).toLowerCase() ? diagonal + 0.1 : diagonal + 2
      const dist =
        a.charCodeAt(i - 1) === b.charCodeAt(j - 1)
          ? diagonal
          : Math.min((previous[j] as number) + 1, (current[j - 1] as number) + 1, substitute)
      current[j] = dist
      columnMin = Math.min(columnMin, dist)
    }
    for (let j = maxJ + 1; j <= b.length; j++) current[j] = big
    if (columnMin > max) return undefined
    ;[previous, current] = [current, previous]
  }
  const result = previous[b.length] as number
  return result > max ? undefined : result
}

/**
 * The candidate TypeScript would offer in "Did you mean …?" for `name` among property names in this order, so a
 * check against part of a catalog can include it and print the message a check against all of it prints.
 */
export function _spellingSuggestion(name: string, candidates: readonly string[]): string | undefined {
  const maxLengthDifference = Math.max(2, Math.floor(name.length * 0.34))
  let best = Math.floor(name.length * 0.4) + 1
  let suggestion: string | undefined
  for (const candidate of candidates) {
    if (Math.abs(candidate.length - name.length) > maxLengthDifference || candidate === name) continue
    // TypeScript skips these: quoted (module) names, and 1-2 character names that differ in more than case.
    if (candidate.startsWith('"')) continue
    if (candidate.length < 3 && candidate.toLowerCase() !== name.toLowerCase()) continue
    const distance = distanceWithin(name, candidate, best - 0.1)
    if (distance === undefined) continue
    best = distance
    suggestion = candidate
  }
  return suggestion
}
