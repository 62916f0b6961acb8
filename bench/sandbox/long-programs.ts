/**
 * Long programs: a TypeScript program longer than `INLINE_STRIP_UNITS` is stripped on a prepare worker
 * thread, not on the host's. Each measuring process (fresh, plain `node`, built packages) creates a QuickJS
 * inline runtime, runs one short program, then a series of long programs (64 KiB of TypeScript, each
 * different) one after another, and reports the first long run and the median of the others, in ms from the
 * run being asked to its answer; a short program's warm run beside them is the floor.
 *
 *   node --import tsx bench/sandbox/long-programs.ts [processes, default 5] [--compare DIR]
 *
 * `--compare DIR`: the same processes also run in another built checkout of this repository (DIR),
 * interleaved process by process with this one, and reported beside it.
 */
import { machine } from '../util.js'
import { compared, freshProcessJson, msCell, processes, ROOT, roots } from './fresh-process.js'

const SERIES = 10

const CHILD = `
const { createQuickJSRuntime } = await import('@ptc/sandbox-quickjs')
const runtime = createQuickJSRuntime({ isolation: 'inline' })
const timed = async (code) => {
  const asked = performance.now()
  const result = await runtime.run({ code, bindings: [], call: async () => null })
  if (result.value !== 1) throw new Error(JSON.stringify(result))
  return performance.now() - asked
}
await timed('const one: number = 1\\nreturn one')
const pad = '// ' + 'x'.repeat(64 * 1024) + '\\n'
const long = []
for (let i = 0; i < ${SERIES}; i++) long.push(await timed(pad + 'const n: number = ' + i + '\\nreturn (n - n + 1) as number'))
const short = []
for (let i = 0; i < ${SERIES}; i++) short.push(await timed('const n: number = ' + i + '\\nreturn (n - n + 1) as number'))
const median = (v) => [...v].sort((a, b) => a - b)[v.length >> 1]
console.log(JSON.stringify({ first: long[0], rest: median(long.slice(1)), short: median(short) }))
await runtime.dispose()
`

interface Sample {
  readonly first: number
  readonly rest: number
  readonly short: number
}

const measure = (root: string): Sample => freshProcessJson(root, CHILD, { timeoutMs: 120_000 }) as Sample

const samples = new Map<string, Sample[]>(roots.map((root) => [root, []]))
for (let i = 0; i < processes; i++) for (const root of roots) samples.get(root)?.push(measure(root))

console.log(
  `Long programs (64 KiB of TypeScript, QuickJS inline), ${processes} fresh processes, interleaved; ${machine()}${compared === undefined ? '' : `; "before": ${compared}`}`,
)
console.log('| checkout | first long run | later long runs (median of each process) | short run, warm |')
console.log('|---|---|---|---|')
for (const root of roots) {
  const s = samples.get(root) ?? []
  console.log(
    `| ${root === ROOT ? 'this' : 'before'} | ${msCell(s.map((x) => x.first))} | ${msCell(s.map((x) => x.rest))} | ${msCell(s.map((x) => x.short))} |`,
  )
}
