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
import { spawnSync } from 'node:child_process'
import { resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { argValues } from '../json.js'
import { machine, median } from '../util.js'

const ROOT = fileURLToPath(new URL('../..', import.meta.url))
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

function measure(root: string): Sample {
  const child = spawnSync(process.execPath, ['--input-type=module', '-e', CHILD], { cwd: root, encoding: 'utf8', env: { ...process.env, NODE_OPTIONS: '' }, timeout: 120_000 })
  if (child.status !== 0) throw new Error(`child failed in ${root}: ${child.stderr}`)
  return JSON.parse(child.stdout.trim().split('\n').at(-1) as string) as Sample
}

const processes = Number(process.argv.slice(2).find((a) => /^\d+$/.test(a)) ?? 5)
const compare = argValues('compare')[0]
const roots = compare === undefined ? [ROOT] : [ROOT, resolve(compare)]
const samples = new Map<string, Sample[]>(roots.map((root) => [root, []]))
for (let i = 0; i < processes; i++) for (const root of roots) samples.get(root)?.push(measure(root))

console.log(`Long programs (64 KiB of TypeScript, QuickJS inline), ${processes} fresh processes, interleaved; ${machine()}${compare === undefined ? '' : `; "before": ${roots[1]}`}`)
const cell = (values: readonly number[]): string => `${median(values).toFixed(1)} ms (${Math.min(...values).toFixed(1)}-${Math.max(...values).toFixed(1)})`
console.log('| checkout | first long run | later long runs (median of each process) | short run, warm |')
console.log('|---|---|---|---|')
for (const root of roots) {
  const s = samples.get(root) ?? []
  console.log(`| ${root === ROOT ? 'this' : 'before'} | ${cell(s.map((x) => x.first))} | ${cell(s.map((x) => x.rest))} | ${cell(s.map((x) => x.short))} |`)
}
