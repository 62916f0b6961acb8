import { DEFAULT_LIMITS } from '@ptc/sandbox'
import type {
  CodeRunFailureKind,
  CodeRunLimits,
  CodeRunRequest,
  CodeRunResult,
  CodeRuntime,
  JsonValue,
} from '@ptc/sandbox'
import { snapshotJson } from '@ptc/tools'

/** A "program" for the fake runtime: host-side async code given the same `tools` and `console` a guest gets. */
export type FakeProgram = (
  tools: Record<string, (args: JsonValue) => Promise<JsonValue>>,
  console: { log(...values: unknown[]): void },
) => Promise<JsonValue | undefined | FakeFailure>

/** Return this from a fake program to make the run fail with that kind. */
export class FakeFailure {
  constructor(
    readonly kind: CodeRunFailureKind,
    readonly message: string,
  ) {}
}

/**
 * A fake `CodeRuntime` for bridge tests: `code` names a registered host-side
 * program. It behaves like a backend at the seam (bindings checked, arguments
 * checked and handed over as a fresh parse, calls through `request.call`,
 * each call's signal aborted when the run ends, calls after the end refused,
 * abort -> `abort` failure) but proves nothing about isolation: real backends
 * are tested by the conformance suite.
 */
export class FakeRuntime implements CodeRuntime {
  readonly name = 'fake'
  /** The runtime's limits when a request sets none (the fake enforces none of them). */
  readonly limits: Readonly<CodeRunLimits>
  readonly programs = new Map<string, FakeProgram>()
  readonly requests: CodeRunRequest[] = []

  constructor(limits: Partial<CodeRunLimits> = {}) {
    this.limits = Object.freeze({ ...DEFAULT_LIMITS, ...limits })
  }

  define(code: string, program: FakeProgram): string {
    this.programs.set(code, program)
    return code
  }

  async run(request: CodeRunRequest): Promise<CodeRunResult> {
    this.requests.push(request)
    const started = Date.now()
    const program = this.programs.get(request.code)
    if (program === undefined) throw new Error(`fake runtime: no program ${JSON.stringify(request.code)}`)
    const logs: string[] = []
    const live = new Set<AbortController>()
    let ended = false
    let subCalls = 0
    const tools: Record<string, (args: JsonValue) => Promise<JsonValue>> = Object.create(null) as Record<string, never>
    for (const name of request.bindings) {
      tools[name] = async (args) => {
        if (ended) throw new Error('the run has ended')
        // As a guest's prelude does: arguments that are not lossless JSON reject this call only;
        // the host gets a fresh parse of their JSON text, its own (the `request.call` contract).
        const copy = snapshotJson(args)
        if (!copy.ok) throw new Error(`arguments are not lossless JSON: ${copy.path || '(root)'}: ${copy.message}`)
        subCalls++
        const controller = new AbortController()
        live.add(controller)
        try {
          return await request.call(name, JSON.parse(JSON.stringify(copy.value)) as JsonValue, controller.signal)
        } catch (error) {
          throw new Error(error instanceof Error ? error.message : String(error))
        } finally {
          live.delete(controller)
        }
      }
    }
    const stats = (): CodeRunResult['stats'] => ({ cpuMs: 0, wallMs: Date.now() - started, queueMs: 0, subCalls })
    const finish = (result: Omit<CodeRunResult, 'stats' | 'logs'>): CodeRunResult => {
      ended = true
      for (const controller of live) controller.abort(new Error('the run has ended'))
      return { ...result, logs, stats: stats() }
    }
    const aborted = new Promise<'aborted'>((resolve) => {
      if (request.signal?.aborted === true) resolve('aborted')
      request.signal?.addEventListener('abort', () => resolve('aborted'), { once: true })
    })
    try {
      const outcome = await Promise.race([
        program(tools, { log: (...values) => logs.push(values.map(String).join(' ')) }),
        aborted,
      ])
      if (outcome === 'aborted') return finish({ error: { kind: 'abort', message: 'the run was aborted' } })
      if (outcome instanceof FakeFailure) return finish({ error: { kind: outcome.kind, message: outcome.message } })
      return finish(outcome === undefined ? {} : { value: outcome })
    } catch (error) {
      return finish({ error: { kind: 'exception', message: error instanceof Error ? error.message : String(error) } })
    }
  }

  async dispose(): Promise<void> {}

  async [Symbol.asyncDispose](): Promise<void> {}
}
