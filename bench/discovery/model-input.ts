/**
 * What a model request's tool input weighs for catalogs of 10, 100, 1 000 and 5 000 tools (issue 46): ptc's code
 * mode with every declaration, ptc with discovery (the default, 8 000 characters), and the providers' own deferral
 * as the adapters emit it (Anthropic `defer_loading` + a BM25 tool search tool, OpenAI Responses `defer_loading` +
 * `tool_search`), where only the tools that are not deferred enter the model's context.
 *
 *   node --conditions=@ptc/source --import tsx bench/discovery/model-input.ts [--json]
 *
 * Characters are of the JSON the request carries (tool schemas) plus the SDK text for ptc; tokens are counted with
 * js-tiktoken's o200k_base encoding (GPT-4o and later; Claude's tokenizer is not published, and counts differ by
 * some percent). Also the host's time for the first `modelInput()` of a catalog and the next ones.
 */
import { toAnthropicTools, toOpenAIResponsesTools } from '@ptc/adapters/shapes'
import { createPtcExecutor } from '@ptc/ptc'
import { createQuickJSRuntime } from '@ptc/sandbox-quickjs'
import { prettyJson, ToolsService, type ToolDefinition, type ToolSchema } from '@ptc/tools'
import { Tiktoken } from 'js-tiktoken/lite'
import o200k from 'js-tiktoken/ranks/o200k_base'
import { emitBenchJson, type BenchResult } from '../json.js'
import { machine, median } from '../util.js'
import { catalogOfSize } from '../../test/fixtures/catalogs/synthetic.js'

const SIZES = [10, 100, 1_000, 5_000] as const
const encoder = new Tiktoken(o200k)
const tokens = (text: string): number => encoder.encode(text).length

function service(size: number, discovery: boolean): ToolsService {
  const tools = new ToolsService()
  for (const tool of catalogOfSize(size)) {
    const definition: ToolDefinition = {
      ...tool,
      output: { schema: {}, render: (_args, value) => [{ type: 'text', text: prettyJson(value) }] },
      execute: () => Promise.resolve(null),
    }
    tools.register(definition)
  }
  tools.setExecutor(createPtcExecutor({ runtime, ...(!discovery && { discovery: false }) }))
  return tools
}

/** The text a model request carries for the step: the tool schemas as JSON, and the SDK text. */
function weigh(schemas: readonly unknown[], sdk: string): { chars: number; tokens: number } {
  const text = JSON.stringify(schemas) + sdk
  return { chars: text.length, tokens: tokens(text) }
}

function time(run: () => unknown): number {
  const start = performance.now()
  run()
  return performance.now() - start
}

const runtime = createQuickJSRuntime({ isolation: 'inline' })
interface Row {
  size: number
  every: { chars: number; tokens: number }
  discovery: { chars: number; tokens: number }
  anthropic: { chars: number; tokens: number; context: { chars: number; tokens: number } }
  openai: { chars: number; tokens: number; context: { chars: number; tokens: number } }
  firstMs: number
  nextMs: number
}
const rows: Row[] = []
for (const size of SIZES) {
  const every = service(size, false)
  const everyInput = every.modelInput()
  const found = service(size, true)
  let input = everyInput
  const firstMs = time(() => (input = found.modelInput()))
  const nextMs = median(Array.from({ length: 20 }, () => time(() => found.modelInput())))
  const all: ToolSchema[] = found.schemas()
  const anthropic = toAnthropicTools(all, { deferLoading: true, toolSearch: 'bm25' })
  const openai = toOpenAIResponsesTools(all, { deferLoading: true })
  const loaded = <T>(tools: readonly T[]): T[] =>
    tools.filter((t) => (t as { defer_loading?: boolean }).defer_loading !== true)
  rows.push({
    size,
    every: weigh(everyInput.schemas, everyInput.sections.map((s) => s.text).join('\n\n')),
    discovery: weigh(input.schemas, input.sections.map((s) => s.text).join('\n\n')),
    anthropic: { ...weigh(anthropic, ''), context: weigh(loaded(anthropic), '') },
    openai: { ...weigh(openai, ''), context: weigh(loaded(openai), '') },
    firstMs,
    nextMs,
  })
}
await runtime.dispose()

const k = (n: number): string => (n >= 10_000 ? `${(n / 1000).toFixed(0)} k` : n.toLocaleString('en-US'))
console.log(`Model input per request, by catalog size (${machine()})`)
console.log(
  '| tools | ptc, every declaration | ptc, discovery | Anthropic defer_loading: in context (request) | OpenAI defer_loading: in context (request) | first / next modelInput() |',
)
console.log('|---|---|---|---|---|---|')
for (const r of rows) {
  const cell = (w: { chars: number; tokens: number }): string => `${k(w.chars)} chars, ${k(w.tokens)} tokens`
  console.log(
    `| ${r.size} | ${cell(r.every)} | ${cell(r.discovery)} | ${cell(r.anthropic.context)} (${k(r.anthropic.chars)} chars) | ${cell(r.openai.context)} (${k(r.openai.chars)} chars) | ${r.firstMs.toFixed(1)} / ${r.nextMs.toFixed(3)} ms |`,
  )
}

const results: BenchResult[] = rows.flatMap((r) => [
  {
    group: 'model input',
    case: `discovery, ${r.size} tools`,
    median: r.discovery.tokens,
    unit: 'tokens',
    better: 'lower',
    baseline: { case: `every declaration, ${r.size} tools`, median: r.every.tokens },
  },
])
emitBenchJson('discovery/model-input', 'Model input by catalog size', results)
