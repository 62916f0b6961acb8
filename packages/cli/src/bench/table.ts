import type { BenchResult } from './scripts.js'

/**
 * How many times the baseline's cost this result is: for rates baseline/median,
 * for times median/baseline. 1 = as fast as the baseline, 2 = twice as slow.
 */
export function costRatio(result: BenchResult): number | undefined {
  const base = result.baseline?.median
  if (base === undefined || !(base > 0) || !(result.median > 0)) return undefined
  return result.better === 'higher' ? base / result.median : result.median / base
}

export function formatValue(value: number, unit: string): string {
  const digits = value >= 100 ? 0 : value >= 10 ? 1 : value >= 1 ? 2 : 3
  const scaled =
    !unit.endsWith('/s') || value < 10_000
      ? value.toFixed(digits)
      : value < 1e6
        ? `${(value / 1e3).toFixed(1)} k`
        : `${(value / 1e6).toFixed(2)} M`
  return `${scaled} ${unit}`
}

export function formatRatio(ratio: number | undefined): string {
  return ratio === undefined ? '—' : ratio >= 100 ? `${ratio.toFixed(0)}x` : `${ratio.toFixed(2)}x`
}

/** A Markdown table: script, case, median, baseline and the cost ratio against it. */
export function benchTable(rows: readonly { script: string; result: BenchResult }[]): string[] {
  const lines = ['| script | case | median | baseline | cost vs baseline |', '|---|---|---|---|---|']
  for (const { script, result } of rows) {
    const label = result.group === undefined ? result.case : `${result.group}: ${result.case}`
    const baseline =
      result.baseline === undefined
        ? '—'
        : `${result.baseline.case} (${formatValue(result.baseline.median, result.unit)})`
    lines.push(
      `| ${script} | ${label} | ${formatValue(result.median, result.unit)} | ${baseline} | ` +
        `${formatRatio(costRatio(result))} |`,
    )
  }
  return lines
}
