import { DEFAULT_LIMITS, SandboxUsageError, acceptRun, resolveLimits } from '@ptc/sandbox'
import type { CodeRunLimits, CodeRunRequest, CodeRunResult, CodeRuntime } from '@ptc/sandbox'
import { loadIsolatedVm } from './load.js'
import type { IvmModule } from './load.js'
import { IsolatePool } from './pool.js'
import { IsolateRun } from './run.js'
import { memoryLimitMib } from './slot.js'

/** Options of `createIsolatedVmRuntime`. */
export interface IsolatedVmRuntimeOptions {
  /** Default limits of this runtime's runs (over `DEFAULT_LIMITS`); a request's limits override them. */
  limits?: Partial<CodeRunLimits>
  /**
   * Isolates kept created and ready (context and prelude setup included) for runs with the default
   * memory limit; each serves exactly one run. Default 2; 0 creates every isolate on demand.
   */
  warmIsolates?: number
  /**
   * Check that node runs with `--no-node-snapshot` (execArgv or NODE_OPTIONS), which isolated-vm
   * needs on Node 20+. Default true; turn it off only for a Node build without a startup snapshot.
   */
  checkNodeSnapshot?: boolean
  /** Loads the isolated-vm module (default: `require('isolated-vm')`); for tests and custom builds. */
  loader?: () => unknown
}

class IsolatedVmCodeRuntime implements CodeRuntime {
  readonly name = 'isolated-vm'
  readonly #defaults: CodeRunLimits
  readonly #pool: IsolatePool
  readonly #live = new Set<IsolateRun>()
  #disposed = false
  #disposing: Promise<void> | undefined

  constructor(ivm: IvmModule, options: IsolatedVmRuntimeOptions) {
    this.#defaults = resolveLimits(options.limits, DEFAULT_LIMITS)
    const warm = options.warmIsolates ?? 2
    if (!Number.isInteger(warm) || warm < 0) throw new SandboxUsageError('warmIsolates must be a non-negative integer')
    this.#pool = new IsolatePool(ivm, warm, memoryLimitMib(this.#defaults.memoryBytes))
  }

  async run(request: CodeRunRequest): Promise<CodeRunResult> {
    if (this.#disposed) throw new SandboxUsageError('the runtime is disposed', 'SANDBOX_DISPOSED')
    const accepted = await acceptRun(request, this.#defaults)
    if (!accepted.ok) return accepted.result
    const { bindings, limits, program } = accepted
    const run = new IsolateRun(request, limits, program, JSON.stringify(bindings))
    if (run.ended) return run.result
    this.#live.add(run)
    void run.begin(this.#pool.acquire(memoryLimitMib(limits.memoryBytes)))
    try {
      return await run.result
    } finally {
      this.#live.delete(run)
      if (this.#live.size === 0 && !this.#disposed) this.#pool.refill()
    }
  }

  dispose(): Promise<void> {
    this.#disposing ??= (async () => {
      this.#disposed = true
      const live = [...this.#live]
      for (const run of live) run.stop('abort')
      await Promise.all(live.map((run) => run.result))
      this.#pool.dispose()
      // Isolates of completed runs are freed one macrotask after their result: let that happen.
      await new Promise((resolve) => setImmediate(resolve))
    })()
    return this.#disposing
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.dispose()
  }
}

/**
 * The native backend: each run gets a fresh isolated-vm isolate (V8, JIT speed) with its own heap
 * limit, disposed when the run ends. Throws `SandboxBackendUnavailableError` (code
 * `SANDBOX_BACKEND_UNAVAILABLE`) when isolated-vm is not installed or node lacks `--no-node-snapshot`.
 */
export function createIsolatedVmRuntime(options: IsolatedVmRuntimeOptions = {}): CodeRuntime {
  const ivm = loadIsolatedVm({ loader: options.loader, checkNodeSnapshot: options.checkNodeSnapshot })
  return new IsolatedVmCodeRuntime(ivm, options)
}
