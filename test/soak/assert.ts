/** The assertions the CI soak files make on a soak report (the long script judges the same report by the strict 10% rule). */
import { expect } from 'vitest'
import { MiB, type SoakReport } from './run-code.soak.js'

export function expectSoakHealthy(report: SoakReport): void {
  const { log } = report
  console.log(
    `[soak ${report.counts.sequential}+${report.counts.concurrent}] ${report.benign} benign, ${report.hostile} hostile; ` +
      `sequential ${report.sequentialMs.toFixed(0)} ms, concurrent ${report.concurrentMs.toFixed(0)} ms; ` +
      `rss (process tree) ${(report.reference.rss / MiB).toFixed(1)} -> ${(report.end.rss / MiB).toFixed(1)} MiB, host ${(report.reference.hostRss / MiB).toFixed(1)} -> ${(report.end.hostRss / MiB).toFixed(1)} MiB, ` +
      `heap ${(report.reference.heapUsed / MiB).toFixed(1)} -> ${(report.end.heapUsed / MiB).toFixed(1)} MiB ` +
      `(calls ${report.reference.calls} -> ${report.end.calls}); ${log.lines} session lines, ${log.starts} starts, ${log.settles} settles`,
  )
  expect(report.hung, 'run_code calls that never returned').toEqual([])
  expect(report.benignFailures, 'benign runs that failed').toEqual([])
  expect(report.hostileMismatches, 'hostile runs that ended otherwise').toEqual([])
  expect(report.benign + report.hostile).toBe(report.counts.sequential + report.counts.concurrent)
  expect(log.invalidLines, 'session lines that do not parse').toBe(0)
  expect(log.unmatched, 'starts without exactly one settle').toEqual([])
  expect(log.orphans, 'settles without a start').toEqual([])
  expect(log.missingStarts, 'benign sub-calls never logged').toEqual([])
  expect(log.starts).toBeGreaterThanOrEqual(2 * report.benign)
  // The short form cannot apply the 10% rule: between its reference call and the end it runs a few
  // hundred calls, where RSS moves by allocator noise alone (malloc arenas of new threads, a replaced
  // worker's 10-20 MiB, V8 growing its semispaces), easily 10% of ~150 MiB. So it bounds what is
  // stable: the JS heap after a forced GC (a leak of run state shows there first) and RSS growth by an
  // absolute bound no noise reaches. long.ts applies the strict 10% rule over 2 000 + 200 calls.
  expect(report.end.heapUsed - report.reference.heapUsed, 'heap growth after GC').toBeLessThan(16 * MiB)
  expect(report.end.rss - report.reference.rss, 'rss growth of the process tree').toBeLessThan(128 * MiB)
}
