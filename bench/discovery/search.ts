/**
 * Tool search for large catalogs (issue 46): how long building the index and answering a query take, and how
 * often the right tool comes first or in the top 5, for ptc's index against MiniSearch and Orama.
 *
 *   node --conditions=@ptc/source --import tsx bench/discovery/search.ts [--quick] [--json]
 *
 * Build: a fresh index and one `add` per tool over 1 000 and 5 000 tools (test/fixtures/catalogs/synthetic.ts),
 * median [min-max] of the runs. Query: every task query (tasks.ts) on 5 000 tools, after one warm pass.
 * Recall: on the GitHub REST catalog alone (1 223 tools), tuning set and held-out set.
 */
import os from 'node:os'
import { emitBenchJson, quickRequested, type BenchResult } from '../json.js'
import { machine, median } from '../util.js'
import { githubCatalog } from '../../test/fixtures/catalogs/github.js'
import { catalogOfSize } from '../../test/fixtures/catalogs/synthetic.js'
import type { CatalogTool } from '../../test/fixtures/catalogs/types.js'
import { miniSearch, orama, ptc, type Candidate, type Engine } from './candidates.js'
import { recall } from './recall.js'
import { HELD_OUT_TASKS, TUNING_TASKS } from './tasks.js'

const BUILD_RUNS = quickRequested ? 3 : 7
const QUERY_PASSES = quickRequested ? 3 : 10
const ALL_QUERIES = [...TUNING_TASKS, ...HELD_OUT_TASKS].map((task) => task.query)

/** Each step adds one feature to the one before; the last is the default tuning. */
const STEPS: ReadonlyArray<[string, Parameters<typeof ptc>[1]]> = [
  [
    'plain BM25 over name words + description',
    { stem: false, abbreviations: false, synonymWeight: 0, mergeSynonyms: false, coverage: 0, weights: [1, 1, 0, 0] },
  ],
  [
    '+ field weights (name 5, description 1)',
    { stem: false, abbreviations: false, synonymWeight: 0, mergeSynonyms: false, coverage: 0, weights: [5, 1, 0, 0] },
  ],
  [
    '+ parameter names 0.3 and descriptions 0.15',
    { stem: false, abbreviations: false, synonymWeight: 0, mergeSynonyms: false, coverage: 0 },
  ],
  ['+ Porter stemming', { abbreviations: false, synonymWeight: 0, mergeSynonyms: false, coverage: 0 }],
  [
    '+ canonical forms and phrases (repo, pr, assignee, "look up")',
    { synonymWeight: 0, mergeSynonyms: false, coverage: 0 },
  ],
  ['+ synonym expansion (group heads 1, others 0.3; one word per group)', { coverage: 0 }],
  ['+ coverage (score x share of query words matched) = default', {}],
]

function build(candidate: Candidate, tools: readonly CatalogTool[]): { engine: Engine; ms: number } {
  const start = performance.now()
  const engine = candidate.create()
  for (const tool of tools) engine.add(tool)
  return { engine, ms: performance.now() - start }
}

function buildTimes(candidate: Candidate, tools: readonly CatalogTool[]): number[] {
  return Array.from({ length: BUILD_RUNS }, () => build(candidate, tools).ms)
}

function queryTimes(engine: Engine): number[] {
  return queryTimesOf(engine, ALL_QUERIES)
}

function queryTimesOf(engine: Engine, queries: readonly string[]): number[] {
  for (const query of queries) engine.search(query, 5)
  const times: number[] = []
  for (let pass = 0; pass < QUERY_PASSES; pass++) {
    for (const query of queries) {
      const start = performance.now()
      engine.search(query, 5)
      times.push(performance.now() - start)
    }
  }
  return times
}

function percentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] as number
}

const spread = (values: readonly number[]): string =>
  `${median(values).toFixed(1)} [${Math.min(...values).toFixed(1)}-${Math.max(...values).toFixed(1)}]`
const pct = (value: number): string => value.toFixed(3)

function qualityOf(candidate: Candidate): { tuning: ReturnType<typeof recall>; heldOut: ReturnType<typeof recall> } {
  const { engine } = build(candidate, githubCatalog())
  const search = (query: string, limit: number): string[] => engine.search(query, limit)
  return { tuning: recall(TUNING_TASKS, search), heldOut: recall(HELD_OUT_TASKS, search) }
}

async function main(): Promise<void> {
  const title = `tool search — ${machine()} — build median [min-max] of ${BUILD_RUNS}, queries x${QUERY_PASSES}`
  console.log(title)
  console.log(`load average at start: ${os.loadavg()[0]?.toFixed(1)} (2 cores: above 1 the timings are inflated)`)
  const sizes = [1_000, 5_000].map((n) => catalogOfSize(n))
  const results: BenchResult[] = []

  console.log(`\nRecall on the GitHub REST catalog (${githubCatalog().length} tools), ptc's index step by step`)
  console.log(`| step | tuning @1 | tuning @5 | held-out @1 | held-out @5 |`)
  console.log('|---|---|---|---|---|')
  for (const [label, tuning] of STEPS) {
    const q = qualityOf(ptc(label, tuning))
    console.log(
      `| ${label} | ${pct(q.tuning.at1)} | ${pct(q.tuning.at5)} | ${pct(q.heldOut.at1)} | ${pct(q.heldOut.at5)} |`,
    )
  }

  const candidates = [
    ptc('ptc ToolSearchIndex (hand-written BM25F)'),
    miniSearch(false),
    miniSearch(true),
    orama(false),
    orama(true),
  ]
  console.log(
    `\nCandidates (${TUNING_TASKS.length} tuning + ${HELD_OUT_TASKS.length} held-out tasks; queries on 5 000 tools)`,
  )
  console.log(
    '| engine | build 1 000 (ms) | build 5 000 (ms) | query p50 (ms) | query p95 (ms) ' +
      '| tuning @1 | tuning @5 | held-out @1 | held-out @5 |',
  )
  console.log('|---|---|---|---|---|---|---|---|---|')
  let baseline: { case: string; median: number } | undefined
  for (const candidate of candidates) {
    const [small, large] = sizes.map((tools) => buildTimes(candidate, tools)) as [number[], number[]]
    const times = queryTimes(build(candidate, sizes[1] as readonly CatalogTool[]).engine)
    const q = qualityOf(candidate)
    console.log(
      `| ${candidate.name} | ${spread(small)} | ${spread(large)} | ` +
        `${percentile(times, 0.5).toFixed(3)} | ${percentile(times, 0.95).toFixed(3)} | ` +
        `${pct(q.tuning.at1)} | ${pct(q.tuning.at5)} | ${pct(q.heldOut.at1)} | ${pct(q.heldOut.at5)} |`,
    )
    const build5k = {
      case: `${candidate.name}: build 5 000 tools`,
      median: median(large),
      unit: 'ms',
      better: 'lower',
    } as const
    baseline ??= { case: build5k.case, median: build5k.median }
    results.push(
      baseline.case === build5k.case ? build5k : { ...build5k, baseline },
      {
        case: `${candidate.name}: query p50, 5 000 tools`,
        median: percentile(times, 0.5),
        unit: 'ms',
        better: 'lower',
      },
      { case: `${candidate.name}: recall@5, GitHub tuning set`, median: q.tuning.at5, unit: 'ratio', better: 'higher' },
    )
  }

  const large = build(ptc('ptc'), sizes[1] as readonly CatalogTool[]).engine
  const patterns = ['/^github\\./i', '/issue/', '/(a+)+$/', '/^(rest2|rest3)\\.repos_.*_branch$/']
  const regexTimes = queryTimesOf(large, patterns)
  console.log(
    `\nptc name patterns (${patterns.join(' ')}) on 5 000 tools: ` +
      `p50 ${percentile(regexTimes, 0.5).toFixed(3)} ms, p95 ${percentile(regexTimes, 0.95).toFixed(3)} ms`,
  )

  const misses = qualityOf(candidates[0] as Candidate)
  console.log('\nptc misses (expected tool not in the top 5):')
  for (const m of [...misses.tuning.misses, ...misses.heldOut.misses])
    console.log(`- "${m.query}" -> ${m.expected}; got ${m.got.slice(0, 3).join(', ')}`)
  emitBenchJson('discovery-search', title, results)
}

await main()
