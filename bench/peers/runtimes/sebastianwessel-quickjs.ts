/**
 * @sebastianwessel/quickjs: `loadQuickJs(variant)` once, then `runSandboxed(({ evalCode }) => evalCode(module))`
 * per run (a new QuickJS context each time). The tool is a function of `env`; a host promise becomes a guest
 * promise. The program is wrapped as an ES module whose default export is the body's value.
 */
import { hostTool } from '../programs.js'
import { importPeer, type Driver, type RuntimeSpec } from './driver.js'

type EvalResult = { ok: true; data: unknown } | { ok: false; error: { name?: string; message?: string } }
interface SandboxOptions {
  env: Record<string, unknown>
  executionTimeout: number
  memoryLimit: number
}
interface QuickJsModule {
  loadQuickJs(variant: unknown): Promise<{
    runSandboxed(
      run: (sandbox: { evalCode(code: string): Promise<EvalResult> }) => Promise<EvalResult>,
      options: SandboxOptions,
    ): Promise<EvalResult>
  }>
}

const options: SandboxOptions = { env: { tool: hostTool }, executionTimeout: 60_000, memoryLimit: 256 * 1024 * 1024 }

export const sebastianwesselQuickJs: RuntimeSpec = {
  id: 'sebastianwessel-quickjs',
  label: '@sebastianwessel/quickjs',
  kind: 'peer',
  tool: 'env.tool',
  packages: ['@sebastianwessel/quickjs', '@jitl/quickjs-ng-wasmfile-release-sync'],
  method:
    'loadQuickJs(quickjs-ng sync variant) once, runSandboxed + evalCode per run (a new context each time), on the host thread. ' +
    'Its one time limit, executionTimeout (set to 60 000 ms), is a wall-clock deadline from the sandbox’s creation (an interrupt handler plus a host timer): ' +
    'time spent waiting on tools counts, and there is no CPU limit; its job pump is a 0 ms setInterval',
  load: async () => {
    const { loadQuickJs } = await importPeer<QuickJsModule>('@sebastianwessel/quickjs')
    const variant = (await importPeer<{ default: unknown }>('@jitl/quickjs-ng-wasmfile-release-sync')).default
    return async (): Promise<Driver> => {
      const { runSandboxed } = await loadQuickJs(variant)
      return {
        run: async (body) => {
          const code = `export default await (async () => {\n${body}\n})()`
          const result = await runSandboxed(({ evalCode }) => evalCode(code), options)
          if (!result.ok) throw new Error(`${result.error.name ?? 'Error'}: ${result.error.message ?? ''}`)
          return result.data
        },
        dispose: async () => undefined,
      }
    }
  },
}
