/**
 * @mondaydotcomorg/atp-server, in process: `createServer` + `use(group)` + `start()` (no HTTP listener), then
 * `server.executor.execute(code, config)`, the call its /execute handler makes (HTTP, authentication and its
 * code validator are left out). The tool is a server-side function of a custom API group (`api.bench.tool`):
 * ATP awaits its handler in process and the program goes on. A tool offered by an ATP *client* instead stops the
 * program at the call (status `paused`); the client runs it and resumes, and the server replays the program
 * from its start with the results recorded so far: not measured here.
 */
import { hostTool } from '../programs.js'
import { importPeer, type Driver, type RuntimeSpec } from './driver.js'

interface ExecutionResult {
  status: string
  result?: unknown
  error?: { message?: string }
}
interface AtpServer {
  use(group: unknown): unknown
  start(): Promise<void>
  stop(): Promise<void>
  executor?: { execute(code: string, config: Record<string, unknown>): Promise<ExecutionResult> }
}
interface AtpModule {
  createServer(config: Record<string, unknown>): AtpServer
}

const MEMORY = 128 * 1024 * 1024
const TIMEOUT = 60_000

export const atpServer: RuntimeSpec = {
  id: 'atp-server',
  label: '@mondaydotcomorg/atp-server',
  kind: 'peer',
  tool: 'api.bench.tool',
  packages: ['@mondaydotcomorg/atp-server', 'isolated-vm'],
  nodeFlags: ['--no-node-snapshot'],
  method:
    'createServer({ logger: "none" }) + a custom API group, start() without listening, server.executor.execute(code) in process (a new isolated-vm isolate per run). ' +
    'The tool is a server-side handler: ATP stops (pauses) a program at every call of a client-side tool and replays it from the start to resume, which this does not measure',
  load: async () => {
    const { createServer } = await importPeer<AtpModule>('@mondaydotcomorg/atp-server')
    return async (): Promise<Driver> => {
      const server = createServer({ execution: { timeout: TIMEOUT, memory: MEMORY }, logger: 'none' })
      server.use({
        name: 'bench',
        type: 'custom',
        functions: [
          {
            name: 'tool',
            description: 'the benchmark tool',
            inputSchema: { type: 'object', properties: { i: { type: 'integer' } }, required: ['i'] },
            handler: hostTool,
          },
        ],
      })
      await server.start()
      const executor = server.executor
      if (executor === undefined) throw new Error('atp-server: no executor after start()')
      const config = { timeout: TIMEOUT, maxMemory: MEMORY, maxLLMCalls: 0, allowedAPIs: [], allowLLMCalls: false }
      return {
        run: async (code) => {
          const out = await executor.execute(code, config)
          if (out.status !== 'completed')
            throw new Error(`execution ${out.status}: ${out.error?.message ?? JSON.stringify(out)}`)
          return out.result
        },
        dispose: () => server.stop(),
      }
    }
  },
}
