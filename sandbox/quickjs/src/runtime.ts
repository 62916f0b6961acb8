import { availableParallelism } from 'node:os'
import { DEFAULT_LIMITS, SandboxUsageError, acceptRun, resolveLimits } from '@ptc/sandbox'
import type { CodeRunLimits, CodeRunRequest, CodeRunResult, CodeRuntime } from '@ptc/sandbox'
import type { QuickJSVariantName } from './engine/module.js'
import type { Executor } from './executor.js'
import { RunHost } from './host/run-host.js'
import { InlineExecutor } from './inline.js'
import { WorkerPool } from './pool.js'

/** Options of `createQuickJSRuntime`. */
export interface QuickJSRuntimeOptions {
  /**
   * `'worker'` (default): guests run in a pool of worker threads; a watchdog terminates a worker
   * that overruns the wall ceiling (even inside a native builtin) and replaces it.
   * `'inline'`: guests run on the calling thread — for trusted code and benchmarks; it cannot stop
   * a long native builtin (see `InlineExecutor`).
   */
  isolation?: 'worker' | 'inline'
  /** Worker threads (worker isolation). Default: `os.availableParallelism()`. */
  poolSize?: number
  /** `'quickjs'` (bellard, default) or `'quickjs-ng'`. */
  variant?: QuickJSVariantName
  /** Default limits of this runtime's runs (over `DEFAULT_LIMITS`); a request's limits override them. */
  limits?: Partial<CodeRunLimits>
  /**
   * How long a worker may ignore a wall or abort stop before it is terminated. Default: 10% of the
   * run's `wallMs`, between 100 and 1000 ms.
   */
  watchdogGraceMs?: number
}

class QuickJSCodeRuntime implements CodeRuntime {
  readonly name = 'quickjs'
  readonly #defaults: CodeRunLimits
  readonly #executor: Executor
  readonly #grace: number | undefined
  readonly #live = new Set<RunHost>()
  #disposed = false
  #disposing: Promise<void> | undefined

  constructor(options: QuickJSRuntimeOptions) {
    this.#defaults = resolveLimits(options.limits, DEFAULT_LIMITS)
    const variant = options.variant ?? 'quickjs'
    this.#executor =
      options.isolation === 'inline'
        ? new InlineExecutor(variant)
        : new WorkerPool(options.poolSize ?? availableParallelism(), variant, this.#defaults.memoryBytes)
    this.#grace = options.watchdogGraceMs
  }

  async run(request: CodeRunRequest): Promise<CodeRunResult> {
    if (this.#disposed) throw new SandboxUsageError('the runtime is disposed', 'SANDBOX_DISPOSED')
    const accepted = await acceptRun(request, this.#defaults)
    if (!accepted.ok) return accepted.result
    const { bindings, limits, program } = accepted
    const grace = this.#grace ?? Math.min(1000, Math.max(100, limits.wallMs * 0.1))
    const host = new RunHost(request, limits, program, grace)
    if (request.signal?.aborted) host.stop('abort')
    if (!host.ended) {
      this.#live.add(host)
      this.#executor.execute(host, { source: program.source, bindings, limits })
    }
    try {
      return await host.result
    } finally {
      this.#live.delete(host)
    }
  }

  dispose(): Promise<void> {
    this.#disposing ??= (async () => {
      this.#disposed = true
      const live = [...this.#live]
      for (const host of live) host.stop('abort')
      await Promise.all(live.map((h) => h.result))
      await this.#executor.dispose()
    })()
    return this.#disposing
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.dispose()
  }
}

/** The default `CodeRuntime`: QuickJS (WebAssembly), worker isolation unless told otherwise. */
export function createQuickJSRuntime(options: QuickJSRuntimeOptions = {}): CodeRuntime {
  return new QuickJSCodeRuntime(options)
}
