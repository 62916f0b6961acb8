/**
 * The full soak of issue 10 (2 000 sequential + 200 concurrent run_code calls, 10% hostile, through a
 * JsonlSession) with the strict rule: RSS at the end within 10% of RSS at the 1000th call.
 *
 *   node --no-node-snapshot --conditions=@ptc/source --import tsx test/soak/long.ts [quickjs|isolated-vm]
 *
 * `PTC_SOAK_SCALE` changes the counts (see run-code.soak.ts; default here: the full form). Exit code 1
 * when any check fails; every check is printed.
 */
import type { CodeRuntime } from '@ptc/sandbox'
import { createIsolatedVmRuntime } from '@ptc/sandbox-isolated-vm'
import { createQuickJSRuntime } from '@ptc/sandbox-quickjs'
import { describeMemory, FULL_SOAK, runSoak, rssVerdict, soakCounts } from './run-code.soak.js'

const backend = process.argv[2] ?? 'quickjs'
if (backend !== 'quickjs' && backend !== 'isolated-vm')
  throw new Error(`usage: long.ts [quickjs|isolated-vm], not ${backend}`)
const runtime: CodeRuntime =
  backend === 'quickjs' ? createQuickJSRuntime({ isolation: 'worker' }) : createIsolatedVmRuntime()
const counts = process.env.PTC_SOAK_SCALE === undefined ? FULL_SOAK : soakCounts()

const report = await runSoak(runtime, { counts, progress: (line) => console.log(line) })
await runtime.dispose()

const checks: [string, boolean, string][] = [
  ['no run_code call hung', report.hung.length === 0, report.hung.slice(0, 5).join('; ')],
  ['no benign run failed', report.benignFailures.length === 0, report.benignFailures.slice(0, 5).join('; ')],
  [
    'every hostile run ended as its kind',
    report.hostileMismatches.length === 0,
    report.hostileMismatches.slice(0, 5).join('; '),
  ],
  [
    'every session line parses',
    report.log.invalidLines === 0,
    `${report.log.invalidLines} invalid of ${report.log.lines}`,
  ],
  [
    'every start has exactly one settle',
    report.log.unmatched.length === 0 && report.log.orphans.length === 0,
    [...report.log.unmatched, ...report.log.orphans].slice(0, 5).join('; '),
  ],
  [
    'every benign sub-call was logged',
    report.log.missingStarts.length === 0,
    report.log.missingStarts.slice(0, 5).join('; '),
  ],
]
const rss = rssVerdict(report)
checks.push(['RSS flat within 10% after the reference call', rss.ok, rss.text])

console.log(
  `\n## soak ${backend}: ${counts.sequential} sequential + ${counts.concurrent} concurrent (${report.benign} benign, ${report.hostile} hostile)`,
)
console.log(
  `sequential ${(report.sequentialMs / 1000).toFixed(1)} s, concurrent ${(report.concurrentMs / 1000).toFixed(1)} s`,
)
console.log(`at call ${report.reference.calls}: ${describeMemory(report.reference)}`)
console.log(
  `after the sequential calls (call ${report.afterSequential.calls}): ${describeMemory(report.afterSequential)}`,
)
console.log(`at the end (call ${report.end.calls}): ${describeMemory(report.end)}`)
console.log(
  `session: ${report.log.lines} lines, ${report.log.starts} starts, ${report.log.settles} settles; ${JSON.stringify(report.log.types)}`,
)
for (const [name, ok, detail] of checks)
  console.log(`${ok ? 'PASS' : 'FAIL'}  ${name}${ok || detail === '' ? '' : `: ${detail}`}`)
console.log(`verdict: ${rss.text}`)
if (checks.some(([, ok]) => !ok)) process.exitCode = 1
