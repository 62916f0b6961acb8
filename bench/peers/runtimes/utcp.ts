/**
 * @utcp/code-mode: `CodeModeUtcpClient.callToolChain(code)` runs the code in a new isolated-vm isolate per call.
 * The tool is a UTCP manual registered through @utcp/direct-call (the package's README way to expose an
 * in-process function); direct-call spreads the tool's arguments, so its callable takes `i`.
 */
import { hostTool } from '../programs.js'
import { importPeer, type Driver, type RuntimeSpec } from './driver.js'

interface CodeModeClient {
  registerManual(template: {
    name: string
    call_template_type: 'direct-call'
    callable_name: string
  }): Promise<{ success: boolean; errors: string[] }>
  callToolChain(code: string, timeout?: number, memoryLimit?: number): Promise<{ result: unknown; logs: string[] }>
  close(): Promise<void>
}
interface CodeModeModule {
  CodeModeUtcpClient: { create(): Promise<CodeModeClient> }
}
interface DirectCallModule {
  addFunctionToUtcpDirectCall(name: string, callable: (...args: never[]) => unknown): unknown
}

const manual = {
  utcp_version: '1.0.0',
  tools: [
    {
      name: 'tool',
      description: 'the benchmark tool',
      inputs: { type: 'object', properties: { i: { type: 'integer' } }, required: ['i'] },
      tool_call_template: { call_template_type: 'direct-call', callable_name: 'bench_tool' },
    },
  ],
}

export const utcpCodeMode: RuntimeSpec = {
  id: 'utcp-code-mode',
  label: '@utcp/code-mode',
  kind: 'peer',
  tool: 'bench.tool',
  packages: ['@utcp/code-mode', 'isolated-vm'],
  nodeFlags: ['--no-node-snapshot'],
  method:
    'CodeModeUtcpClient.callToolChain(code, 60 000 ms), the tool a direct-call UTCP manual; a tool call blocks the isolate (applySyncPromise), so Promise.all runs the calls one by one. ' +
    'It declares isolated-vm ^6 (Node >= 22): on Node 20 it runs with isolated-vm 5.0.4 substituted (npm overrides). ' +
    'Logs off: @utcp/sdk and @utcp/direct-call print two console.log lines per tool call with no switch, so this process replaces console.log and console.info with no-ops',
  load: async () => {
    console.log = () => undefined
    console.info = () => undefined
    const { CodeModeUtcpClient } = await importPeer<CodeModeModule>('@utcp/code-mode')
    const { addFunctionToUtcpDirectCall } = await importPeer<DirectCallModule>('@utcp/direct-call')
    return async (): Promise<Driver> => {
      addFunctionToUtcpDirectCall('bench_tool', (i: number) => hostTool({ i }))
      addFunctionToUtcpDirectCall('bench_manual', async () => manual)
      const client = await CodeModeUtcpClient.create()
      const registered = await client.registerManual({
        name: 'bench',
        call_template_type: 'direct-call',
        callable_name: 'bench_manual',
      })
      if (!registered.success) throw new Error(`registerManual failed: ${registered.errors.join('; ')}`)
      return {
        run: async (code) => {
          const { result, logs } = await client.callToolChain(code, 60_000)
          const failure = logs.find((line) => line.startsWith('[ERROR]'))
          if (failure !== undefined) throw new Error(failure)
          return result
        },
        dispose: () => client.close(),
      }
    }
  },
}
