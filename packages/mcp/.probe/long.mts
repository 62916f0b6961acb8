import { createPtcExecutor } from '@ptc/ptc'
import { createQuickJSRuntime } from '@ptc/sandbox-quickjs'
import { defineTool, MemorySession, ToolsService, type Agent } from '@ptc/tools'
const tools = new ToolsService()
const mode = process.argv[2] ?? 'arr'
tools.register(defineTool({ name: 'big', description: 'x', parameters: {}, output: { schema: { type: 'json' } }, isConcurrencySafe: () => true,
  execute: async () => (mode === 'arr' ? new Array(2e6).fill(0) : mode === 'keys' ? Object.fromEntries(Array.from({ length: 300000 }, (_, i) => [`k${i}`, i])) : Array.from({ length: 100000 }, (_, i) => ({ id: i, name: `row ${i}`, email: `u${i}@example.com`, score: i * 1.5, tags: ['a', 'b'], active: i % 2 === 0, city: 'Berlin', zip: '10115', note: null, n: i }))) as never }))
const runtime = createQuickJSRuntime({ isolation: 'inline' })
tools.setExecutor(createPtcExecutor({ runtime }))
const agent: Agent = { id: 'a', session: new MemorySession() }
for (const direct of [true, false]) {
  const t = performance.now()
  const call = direct ? { name: 'big', arguments: '{}' } : { name: 'run_code', arguments: JSON.stringify({ code: 'const r = await tools.big({}); return r.length ?? Object.keys(r).length', description: 'x' }) }
  const b = await tools.execute({ calls: [{ type: 'tool_call', id: 'c' + direct, ...call }], signal: new AbortController().signal, agent })
  console.log(direct ? 'direct' : 'run_code', Math.round(performance.now() - t), 'ms', JSON.stringify((b.results[0] as any).result.content).slice(0, 100))
}
await runtime.dispose()
