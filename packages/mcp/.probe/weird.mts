import { createPtcExecutor } from '@ptc/ptc'
import { createQuickJSRuntime } from '@ptc/sandbox-quickjs'
import { createIsolatedVmRuntime } from '@ptc/sandbox-isolated-vm'
import { defineTool, MemorySession, ToolsService, type Agent } from '@ptc/tools'

process.on('unhandledRejection', (e) => console.log('UNHANDLED REJECTION', String(e).slice(0, 200)))
process.on('uncaughtException', (e) => console.log('UNCAUGHT', String(e).slice(0, 200)))

const cyclic: Record<string, unknown> = { a: 1 }; cyclic['self'] = cyclic
const deep = (n: number): unknown => { let v: unknown = 1; for (let i = 0; i < n; i++) v = { v }; return v }
const deepArr = (n: number): unknown => { let v: unknown = 1; for (let i = 0; i < n; i++) v = [v]; return v }
const cases: Record<string, () => unknown> = {
  getterThrows: () => ({ get x() { throw new Error('getter boom') } }),
  proxyOwnKeysThrows: () => new Proxy({}, { ownKeys() { throw new Error('ownKeys boom') } }),
  proxyGetThrows: () => new Proxy({ a: 1 }, { get() { throw new Error('get boom') } }),
  toJSONThrows: () => ({ toJSON() { throw new Error('toJSON boom') } }),
  toJSONUndefined: () => ({ toJSON() { return undefined } }),
  cyclic: () => cyclic,
  bigint: () => ({ n: 10n }),
  symbolKey: () => ({ [Symbol('s')]: 1, a: 2 }),
  deep5000: () => deep(5000),
  deepArr100k: () => deepArr(100000),
  manyKeys: () => Object.fromEntries(Array.from({ length: 300000 }, (_, i) => [`k${i}`, i])),
  date: () => ({ d: new Date(0) }),
  map: () => ({ m: new Map([[1, 2]]) }),
  typed: () => ({ t: new Uint8Array(3) }),
  nan: () => ({ x: NaN, y: Infinity, z: -0 }),
  fn: () => ({ f() {} }),
  undef: () => undefined,
  sparse: () => { const a: unknown[] = []; a[1e6] = 1; return { a } },
  longArray: () => new Array(5e6).fill(0),
  throwString: () => { throw 'a string' },
  throwNull: () => { throw null },
  throwUndefined: () => { throw undefined },
  throwGetterMessage: () => { const e = new Error('x'); Object.defineProperty(e, 'message', { get() { throw new Error('message getter boom') } }); throw e },
  throwProxy: () => { throw new Proxy({}, { get() { throw new Error('proxy boom') }, getPrototypeOf() { throw new Error('proto boom') } }) },
  throwCyclicCause: () => { const e = new Error('cyc') as Error & { cause?: unknown }; e.cause = e; throw e },
  throwToStringThrows: () => { throw { toString() { throw new Error('toString boom') } } },
  throwDeepCause: () => { let e = new Error('root'); for (let i = 0; i < 100000; i++) e = new Error('c', { cause: e }); throw e },
  rejectThenable: () => ({ then(_r: unknown, j: (e: unknown) => void) { j(new Error('thenable reject')) } }),
  neverThenable: () => ({ then() {} }),
  throwsInThenGetter: () => ({ get then() { throw new Error('then getter boom') } }),
}

const tools = new ToolsService()
tools.register(defineTool({
  name: 'weird', description: 'Weird results.', parameters: { c: { type: 'string', required: true } },
  output: { schema: { type: 'json' } }, isConcurrencySafe: () => true,
  execute: async (args: { c: string }) => cases[args.c]!() as never,
}))
const backend = process.argv[2] ?? 'worker'
const runtime = backend === 'ivm' ? createIsolatedVmRuntime() : createQuickJSRuntime(backend === 'inline' ? { isolation: 'inline' } : { poolSize: 1 })
tools.setExecutor(createPtcExecutor({ runtime }))
const agent: Agent = { id: 'a', session: new MemorySession() }
let n = 0
for (const c of Object.keys(cases)) {
  const code = `try { const r = await tools.weird({ c: ${JSON.stringify(c)} }); return { ok: typeof r === 'object' && r !== null ? JSON.stringify(r).slice(0, 80) : String(r) } } catch (e) { return { caught: String(e && e.message).slice(0, 160), code: e && e.code } }`
  const started = Date.now()
  const watchdog = setTimeout(() => console.log('  ...still waiting on', c), 15000)
  const batch = await tools.execute({ calls: [{ type: 'tool_call', id: `r${++n}`, name: 'run_code', arguments: JSON.stringify({ code, description: c, timeoutMs: 10000 }) }], signal: new AbortController().signal, agent })
  clearTimeout(watchdog)
  const r = batch.results[0] as { result: { content: { text?: string }[]; isError?: boolean } }
  const text = r.result.content.map((x) => x.text ?? '').join(' ').replace(/\s+/g, ' ').slice(0, 230)
  console.log(`${c} [${Date.now() - started} ms]${r.result.isError ? ' ERROR' : ''}: ${text}`)
}
await runtime.dispose()
console.log('done')
