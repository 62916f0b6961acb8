import type { BenchJson, BenchResult, BenchRuntime } from './scripts.js'

/** The cases whose ratio to the best peer is printed (µs per call, lower is better). */
const RATIO_CASES = ['sequential', 'Promise.all']

const figure = (value: number): string =>
  value >= 100 ? value.toFixed(0) : value >= 10 ? value.toFixed(1) : value.toFixed(2)

/** `median (max/min x)` when the median was taken across several processes. */
function cell(result: BenchResult | undefined): string {
  if (result === undefined) return '—'
  const spread = result.spread
  return spread === undefined || spread.samples.length < 2 || !(spread.min > 0)
    ? figure(result.median)
    : `${figure(result.median)} (${(spread.max / spread.min).toFixed(2)}x)`
}

/**
 * The comparison of a bench/peers run: one row per runtime (ptc's backends, the peers, the plain Node
 * baseline), one column per figure with its median across processes and spread (max/min); a runtime that
 * failed shows its error. Then each ptc row's ratio to the best peer, and the notes on method.
 */
export function peersTable(json: BenchJson): string[] {
  const runtimes: readonly BenchRuntime[] =
    json.runtimes ??
    [...new Set(json.results.map((r) => r.group ?? ''))].map((group) => ({ group, kind: 'peer', method: '' }))
  const measured = [...new Map(json.results.map((r) => [r.case, r.unit])).entries()]
  const cases: [string, string][] = measured.length > 0 ? measured : [['result', '']]
  const find = (group: string, name: string): BenchResult | undefined =>
    json.results.find((r) => r.group === group && r.case === name)
  const lines = [
    `| runtime | ${cases.map(([name, unit]) => (unit === '' ? name : `${name} (${unit})`)).join(' | ')} |`,
    `|---|${cases.map(() => '---|').join('')}`,
  ]
  for (const runtime of runtimes) {
    const cells =
      runtime.error !== undefined
        ? [`failed: ${runtime.error.split('\n')[0] ?? ''}`, ...cases.slice(1).map(() => '—')]
        : cases.map(([name]) => cell(find(runtime.group, name)))
    lines.push(`| ${runtime.group} | ${cells.join(' | ')} |`)
  }
  const peers = runtimes.filter((r) => r.kind === 'peer' && r.error === undefined)
  const best = RATIO_CASES.map((name) => {
    const measured = peers.flatMap((p) => find(p.group, name) ?? [])
    return measured.length === 0 ? undefined : measured.reduce((a, b) => (b.median < a.median ? b : a))
  })
  const ptc = runtimes.filter((r) => r.kind === 'ptc' && r.error === undefined)
  if (ptc.length > 0 && best.some((b) => b !== undefined)) {
    const heads = RATIO_CASES.map((name, i) => {
      const peer = best[i]
      return peer === undefined ? name : `${name} (best peer: ${peer.group}, ${figure(peer.median)} ${peer.unit})`
    })
    lines.push(
      '',
      `| ptc against the best peer (time per call; below 1 = ptc faster) | ${heads.join(' | ')} |`,
      `|---|${RATIO_CASES.map(() => '---|').join('')}`,
    )
    for (const runtime of ptc) {
      const ratios = RATIO_CASES.map((name, i) => {
        const own = find(runtime.group, name)
        const peer = best[i]
        return own === undefined || peer === undefined ? '—' : `${(own.median / peer.median).toFixed(2)}x`
      })
      lines.push(`| ${runtime.group} | ${ratios.join(' | ')} |`)
    }
  }
  if (json.notes !== undefined && json.notes.length > 0) lines.push('', ...json.notes.map((note) => `- ${note}`))
  return lines
}
