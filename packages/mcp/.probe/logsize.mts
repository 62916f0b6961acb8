import { statSync, mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createPtcExecutor } from '@ptc/ptc'
import { createQuickJSRuntime } from '@ptc/sandbox-quickjs'
import { defineTool, ToolsService, type Agent } from '@ptc/tools'
import { JsonlSession } from '@ptc/tools/session'
const tools = new ToolsService()
const big = 'x'.repeat(1 << 20)
tools.register(defineTool({ name: 'big', description: 'x', parameters: {}, output: { schema: { type: 'string' } }, isConcurrencySafe: () => true, execute: async () => big }))
tools.register(defineTool({ name: 'sink', description: 'x', parameters: { s: { type: 'string', required: true } }, output: { schema: { type: 'string' } }, isConcurrencySafe: () => true, execute: async () => 'ok' }))
const runtime = createQuickJSRuntime({ isolation: 'inline' })
tools.setExecutor(createPtcExecutor({ runtime }))
const file = join(mkdtempSync(join(tmpdir(), 'log-')), 's.jsonl')
const session = await JsonlSession.open(file)
const agent: Agent = { id: 'a', session }
const code = process.argv[2] === 'args' ? 'const s = "y".repeat(1 << 20); for (let i = 0; i < 100; i++) await tools.sink({ s }); return 1' : 'let n = 0; for (let i = 0; i < 100; i++) n += (await tools.big({})).length; return n'
const t = performance.now()
const b = await tools.execute({ calls: [{ type: 'tool_call', id: 'c', name: 'run_code', arguments: JSON.stringify({ code, description: 'x' }) }], signal: new AbortController().signal, agent })
console.log(Math.round(performance.now() - t), 'ms', JSON.stringify((b.results[0] as any).result.content).slice(0, 100))
await session.close?.()
console.log('log MiB', (statSync(file).size / 2 ** 20).toFixed(1), 'rss', Math.round(process.memoryUsage().rss / 2 ** 20))
await runtime.dispose()
