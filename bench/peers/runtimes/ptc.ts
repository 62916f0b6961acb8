/**
 * ptc's backends, each two ways: the whole path (`ToolsService` + `createPtcExecutor`, one `run_code` call per
 * program, the tool a `defineTool` tool) and the bare bridge (`runtime.run` with a `call` that answers with the
 * host tool directly), as in bench/ptc/ptc.ts. `maxPendingSubCalls` is raised so one Promise.all can hold every
 * call; the whole path keeps `createPtcExecutor`'s default of 10 sub-calls in parallel.
 */
import type { CodeRuntime, JsonValue } from '@ptc/sandbox'
import { hostTool } from '../programs.js'
import type { Driver, RuntimeSpec } from './driver.js'

const LIMITS = { maxPendingSubCalls: 10_000 }
type Backend = 'quickjs-worker' | 'quickjs-inline' | 'isolated-vm' | 'isolated-vm-none'

async function createRuntime(backend: Backend): Promise<CodeRuntime> {
  if (backend === 'isolated-vm' || backend === 'isolated-vm-none') {
    const { createIsolatedVmRuntime, isolatedVmAvailability } = await import('@ptc/sandbox-isolated-vm')
    const availability = isolatedVmAvailability()
    if (!availability.available) throw new Error(`isolated-vm is not available: ${availability.reason}`)
    // 'none': isolates in this process, as the isolated-vm peers run theirs (no child process to contain them).
    return createIsolatedVmRuntime(backend === 'isolated-vm-none' ? { containment: 'none' } : {})
  }
  const { createQuickJSRuntime } = await import('@ptc/sandbox-quickjs')
  return backend === 'quickjs-worker'
    ? createQuickJSRuntime({ poolSize: 1 })
    : createQuickJSRuntime({ isolation: 'inline' })
}

async function wholePath(runtime: CodeRuntime): Promise<Driver> {
  const { createPtcExecutor } = await import('@ptc/ptc')
  const { defineTool, ToolsService } = await import('@ptc/tools')
  const tools = new ToolsService()
  tools.register(
    defineTool({
      name: 'tool',
      description: 'the benchmark tool',
      parameters: { i: { type: 'integer', required: true } },
      output: {
        schema: {
          type: 'object',
          additionalProperties: false,
          properties: { ok: { type: 'boolean' }, i: { type: 'integer' } },
        },
        render: (_a, v) => [{ type: 'text', text: JSON.stringify(v) }],
      },
      isConcurrencySafe: () => true,
      execute: hostTool,
    }),
  )
  tools.setExecutor(createPtcExecutor({ runtime, limits: LIMITS }))
  const signal = new AbortController().signal
  let n = 0
  return {
    run: async (code) => {
      const call = {
        type: 'tool_call' as const,
        id: `r${n++}`,
        name: 'run_code',
        arguments: JSON.stringify({ code, description: 'bench' }),
      }
      const out = await tools.execute({ calls: [call], signal })
      const result = out.results[0]?.result
      if (result === undefined || result.isError) throw new Error(`run_code failed: ${JSON.stringify(result?.content)}`)
      const text = result.content.map((c) => (c.type === 'text' ? c.text : '')).join('\n')
      return Number(/-?\d+/.exec(text)?.[0])
    },
    dispose: () => runtime.dispose(),
  }
}

function bareBridge(runtime: CodeRuntime): Driver {
  const call = async (_name: string, args: JsonValue): Promise<JsonValue> => hostTool(args as { i: number })
  return {
    run: async (code) => {
      const result = await runtime.run({ code, bindings: ['tool'], call, limits: LIMITS })
      if (result.error !== undefined) throw new Error(`run failed (${result.error.kind}): ${result.error.message}`)
      return result.value
    },
    dispose: () => runtime.dispose(),
  }
}

function spec(backend: Backend, path: 'whole' | 'bridge', label: string): RuntimeSpec {
  return {
    id: `ptc-${backend}${path === 'bridge' ? '-bridge' : ''}`,
    label: `ptc ${label}, ${path === 'whole' ? 'whole path' : 'bare bridge'}`,
    kind: 'ptc',
    backend: backend.startsWith('isolated-vm') ? 'isolated-vm' : 'quickjs',
    ...(backend.startsWith('isolated-vm') && { nodeFlags: ['--no-node-snapshot'] }),
    tool: 'tools.tool',
    packages: [],
    method:
      path === 'whole'
        ? 'ToolsService + createPtcExecutor, one run_code call per program (arguments parsed, policies, scheduler, output validated and rendered); ' +
          "at most 10 sub-calls in parallel (the executor's default), maxPendingSubCalls 10 000. Runtimes as in bench/ptc/ptc.ts: createQuickJSRuntime({ poolSize: 1 }), ({ isolation: 'inline' }), createIsolatedVmRuntime() and createIsolatedVmRuntime({ containment: 'none' }) (isolates in the host process, as the isolated-vm peers run theirs; for trusted code only)"
        : 'runtime.run with a `call` that answers with the host tool (no ToolsService), maxPendingSubCalls 10 000',
    load: async () => {
      // The modules are loaded here so that "import" counts them; the driver is made in "cold".
      await import(backend.startsWith('isolated-vm') ? '@ptc/sandbox-isolated-vm' : '@ptc/sandbox-quickjs')
      if (path === 'whole') await Promise.all([import('@ptc/ptc'), import('@ptc/tools')])
      return async () => {
        const runtime = await createRuntime(backend)
        return path === 'whole' ? wholePath(runtime) : bareBridge(runtime)
      }
    },
  }
}

export const ptcRuntimes: readonly RuntimeSpec[] = [
  spec('quickjs-worker', 'whole', 'QuickJS worker'),
  spec('quickjs-worker', 'bridge', 'QuickJS worker'),
  spec('quickjs-inline', 'whole', 'QuickJS inline'),
  spec('quickjs-inline', 'bridge', 'QuickJS inline'),
  spec('isolated-vm', 'whole', 'isolated-vm'),
  spec('isolated-vm', 'bridge', 'isolated-vm'),
  spec('isolated-vm-none', 'whole', "isolated-vm in process (containment 'none')"),
  spec('isolated-vm-none', 'bridge', "isolated-vm in process (containment 'none')"),
]
