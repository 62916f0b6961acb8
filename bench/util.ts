/** Shared helpers for benchmarks: timing, medians, environment line. */
import os from 'node:os'

export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b)
  const mid = sorted.length >> 1
  return sorted.length % 2 === 1 ? (sorted[mid] as number) : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2
}

/** Run `round` `rounds` times after `warmup` rounds; returns the median of the rates (operations per second). */
export async function medianRate(ops: number, round: () => Promise<void>, rounds = 7, warmup = 2): Promise<number> {
  for (let i = 0; i < warmup; i++) await round()
  const rates: number[] = []
  for (let i = 0; i < rounds; i++) {
    const start = process.hrtime.bigint()
    await round()
    const ns = Number(process.hrtime.bigint() - start)
    rates.push(ops / (ns / 1e9))
  }
  return median(rates)
}

export function machine(): string {
  const cpu = os.cpus()[0]?.model ?? 'unknown cpu'
  return `Node ${process.version}, ${os.cpus().length} x ${cpu}, ${Math.round(os.totalmem() / 2 ** 30)} GiB`
}

export function formatRate(rate: number): string {
  return rate >= 1e6
    ? `${(rate / 1e6).toFixed(2)} M/s`
    : rate >= 1e3
      ? `${(rate / 1e3).toFixed(1)} k/s`
      : `${rate.toFixed(1)} /s`
}
