import type { BenchResult } from './scripts.js'
import { costRatio, formatRatio } from './table.js'

const escape = (text: string): string =>
  text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;')

/**
 * A self-contained SVG bar chart of cost ratios against the baselines (log
 * scale: 1x at the left edge of the bars), one bar per result with a baseline.
 */
export function ratioChart(title: string, rows: readonly { script: string; result: BenchResult }[]): string {
  const bars = rows.flatMap(({ script, result }) => {
    const ratio = costRatio(result)
    return ratio === undefined
      ? []
      : [
          {
            label: `${script} · ${result.group === undefined ? '' : `${result.group}: `}${result.case}`,
            ratio,
            baseline: result.baseline?.case ?? '',
          },
        ]
  })
  // About 6.6 px per character at 12 px: wide enough for the longest label (bench --peers names runtimes with their
  // versions).
  const labelWidth = Math.max(430, Math.ceil(Math.max(0, ...bars.map((b) => b.label.length)) * 6.6) + 16)
  const barWidth = 420
  const rowHeight = 22
  const top = 48
  const height = top + Math.max(1, bars.length) * rowHeight + 30
  const width = labelWidth + barWidth + 90
  const maxLog = Math.max(1, ...bars.map((b) => Math.log10(Math.max(1, b.ratio))))
  const x = (ratio: number): number => (Math.log10(Math.max(1, ratio)) / maxLog) * barWidth
  const parts = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" ` +
      `font-family="system-ui, sans-serif" font-size="12">`,
    `<rect width="100%" height="100%" fill="#fff"/>`,
    `<text x="10" y="20" font-size="14" font-weight="bold">${escape(title)}</text>`,
    `<text x="10" y="38" fill="#555">cost relative to the baseline measured in the same process (log scale; 1x = as ` +
      `fast as the baseline)</text>`,
  ]
  for (let tick = 1; tick <= 10 ** Math.ceil(maxLog); tick *= 10) {
    const tx = labelWidth + x(tick)
    if (tx > labelWidth + barWidth + 1) break
    parts.push(
      `<line x1="${tx.toFixed(1)}" y1="${top - 4}" x2="${tx.toFixed(1)}" y2="${height - 24}" stroke="#ddd"/><text ` +
        `x="${tx.toFixed(1)}" y="${height - 10}" text-anchor="middle" fill="#555">${tick}x</text>`,
    )
  }
  bars.forEach((bar, i) => {
    const y = top + i * rowHeight
    const w = Math.max(2, x(bar.ratio))
    const fill = bar.ratio <= 1.5 ? '#3a8f5c' : bar.ratio <= 10 ? '#d89b2b' : '#c4513e'
    parts.push(
      `<text x="${labelWidth - 8}" y="${y + 14}" text-anchor="end">${escape(bar.label)}</text>`,
      `<rect x="${labelWidth}" y="${y + 3}" width="${w.toFixed(1)}" height="${rowHeight - 6}" ` +
        `fill="${fill}"><title>${escape(`${bar.label}: ${formatRatio(bar.ratio)} of ${bar.baseline}`)}</title></rect>`,
      `<text x="${(labelWidth + w + 6).toFixed(1)}" y="${y + 14}">${escape(formatRatio(bar.ratio))}</text>`,
    )
  })
  if (bars.length === 0) parts.push(`<text x="10" y="${top + 14}">no results with a baseline</text>`)
  parts.push('</svg>')
  return `${parts.join('\n')}\n`
}
