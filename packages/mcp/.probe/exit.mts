import { createPtcExecutor } from '@ptc/ptc'
import { createQuickJSRuntime } from '@ptc/sandbox-quickjs'
import { createIsolatedVmRuntime } from '@ptc/sandbox-isolated-vm'
import { defineTool, MemorySession, ToolsService, type Agent } from '@ptc/tools'
const backend = process.argv[2] ?? 'worker'
const variant = process.argv[3] ?? 'never'
const tools = new ToolsService()
tools.register(defineTool({ name: 'never', description: 'x', parameters: {}, output: { schema: { type: 'string' } }, isConcurrencySafe: () => true, execute: () => new Promise<string>(() => {}) }))
const runtime = backend === 'ivm' ? createIsolatedVmRuntime() : createQuickJSRuntime(backend === 'inline' ? { isolation: 'inline' } : { poolSize: 1 })
tools.setExecutor(createPtcExecutor({ runtime }))
const agent: Agent = { id: 'a', session: new MemorySession() }
const code = variant === 'never' ? 'await tools.never({}); return 1' : variant === 'loop' ? 'while (true) {}' : variant === 'promise' ? 'await new Promise(() => {}); return 1' : 'return 2'
process.on('exit', (c) => console.log('exit event, code', c, 'finished =', finished))
let finished = false
const t = Date.now()
const b = await tools.execute({ calls: [{ type: 'tool_call', id: 'c', name: 'run_code', arguments: JSON.stringify({ code, description: 'x', timeoutMs: 1500 }) }], signal: new AbortController().signal, agent })
finished = true
console.log(backend, variant, Date.now() - t, 'ms', JSON.stringify((b.results[0] as any).result.content).slice(0, 120))
await runtime.dispose()
