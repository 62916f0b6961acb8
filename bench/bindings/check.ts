/**
 * `checkProgram` (`@ptc/bindings/check`): the first check of a process (loads `typescript`, parses the
 * `lib.*.d.ts` files and the SDK declarations) against later checks, which reuse the parsed lib files, and
 * checks against an SDK text checked before, which also reuse its parsed declarations. The baseline is the
 * first check of the same process. One process gives one first-check figure: run the script several times.
 *
 *   node --conditions=@ptc/source --import tsx bench/bindings/check.ts [--quick]
 *
 * `--quick`: fewer samples. The unit tests assert only what is reused (bindings/src/check/host.test.ts);
 * the times are measured here.
 */
import { renderDeclarations, type BindingTool } from '@ptc/bindings'
import { checkProgram } from '@ptc/bindings/check'
import { quickRequested } from '../json.js'
import { machine, median } from '../util.js'

const SAMPLES = quickRequested ? 5 : 21

const lookup = (i: number): BindingTool => ({
  name: `lookup_${i}`,
  description: 'Look up a key.',
  parameters: {
    type: 'object',
    properties: { key: { type: 'string' } },
    required: ['key'],
    additionalProperties: false,
  },
  output: {
    type: 'object',
    properties: { value: { type: 'integer' } },
    required: ['value'],
    additionalProperties: false,
  },
})
/** A distinct SDK text per `i` (its parsed declarations are not in the cache yet). */
const sdk = (i: number): string => renderDeclarations([lookup(0), lookup(i + 1)])
const code = 'const { value } = await tools.lookup_0({ key: "a" })\nreturn value + 1'

function time(run: () => void): number {
  const start = process.hrtime.bigint()
  run()
  return Number(process.hrtime.bigint() - start) / 1e6
}

function check(declarations: string): void {
  const result = checkProgram(code, declarations)
  if (!result.ok) throw new Error(`the benchmark program should check: ${JSON.stringify(result.diagnostics)}`)
}

const first = time(() => check(sdk(0)))
const newSdk = median(Array.from({ length: SAMPLES }, (_, i) => time(() => check(sdk(i + 1)))))
const sameSdk = median(Array.from({ length: SAMPLES }, () => time(() => check(sdk(0)))))

console.log(`checkProgram benchmark — ${machine()} — median of ${SAMPLES} checks (first check: one per process)`)
console.log('| case | ms | share of the first check |')
console.log('|---|---|---|')
for (const [label, ms] of [
  ['first check of the process (baseline)', first],
  ['a new SDK text (lib files reused)', newSdk],
  ['an SDK text checked before (lib files and declarations reused)', sameSdk],
] as const) {
  console.log(`| ${label} | ${ms.toFixed(1)} | ${((100 * ms) / first).toFixed(1)}% |`)
}
