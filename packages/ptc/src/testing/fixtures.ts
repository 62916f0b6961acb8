import {
  defineTool,
  MemorySession,
  ToolsService,
  type Agent,
  type ApprovalService,
  type ToolBatchResult,
  type ToolCallBlock,
  type ToolExecutionResult,
} from '@ptc/tools'
import type { CodeRuntime } from '@ptc/sandbox'
import { createPtcExecutor, type PtcExecutorOptions } from '../executor.js'

/** Two small tools: a concurrency-safe lookup with an optional delay, and an exclusive writer. */
export function fixtureTools(trace: string[] = []): ReturnType<typeof defineTool>[] {
  const lookup = defineTool({
    name: 'lookup',
    description: 'Look up a key.',
    parameters: { key: { type: 'string', required: true }, delayMs: { type: 'integer' } },
    output: {
      schema: {
        type: 'object',
        additionalProperties: false,
        properties: { key: { type: 'string' }, value: { type: 'integer' } },
      },
      render: (_a, v) => [{ type: 'text', text: `${v.key}=${v.value}` }],
    },
    isConcurrencySafe: () => true,
    execute: async ({ key, delayMs }, ctx) => {
      trace.push(`start ${key}`)
      if (delayMs !== undefined) await sleep(delayMs, ctx.signal)
      trace.push(`end ${key}`)
      return { key, value: key.length }
    },
  })
  const write = defineTool({
    name: 'write',
    description: 'Write a key (exclusive).',
    parameters: { key: { type: 'string', required: true }, delayMs: { type: 'integer' } },
    output: {
      schema: { type: 'object', additionalProperties: false, properties: { written: { type: 'string' } } },
      render: (_a, v) => [{ type: 'text', text: `wrote ${v.written}` }],
    },
    execute: async ({ key, delayMs }, ctx) => {
      trace.push(`start write ${key}`)
      if (delayMs !== undefined) await sleep(delayMs, ctx.signal)
      trace.push(`end write ${key}`)
      return { written: key }
    },
  })
  return [lookup, write]
}

/** Resolves after `ms`, or rejects when the signal aborts (a cooperative tool body). */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted === true) return reject(signal.reason)
    const timer = setTimeout(resolve, ms)
    signal?.addEventListener(
      'abort',
      () => {
        clearTimeout(timer)
        reject(signal.reason)
      },
      { once: true },
    )
  })
}

export interface PtcHarness {
  readonly tools: ToolsService
  readonly session: MemorySession
  readonly agent: Agent
  readonly trace: string[]
  /** Run one model batch of `run_code` calls (or other names) on behalf of the agent. */
  batch(calls: ToolCallBlock[], signal?: AbortSignal): Promise<ToolBatchResult>
  /** Run one program and return its result. */
  runCode(
    code: string,
    options?: { description?: string; timeoutMs?: number; signal?: AbortSignal },
  ): Promise<ToolExecutionResult>
}

/** Options of the harness: the executor's, plus the service's approval. */
export type PtcHarnessOptions = Omit<PtcExecutorOptions, 'runtime'> & { approval?: ApprovalService }

/** A ToolsService with the fixture tools and a PTC executor over `runtime`. */
export function ptcHarness(runtime: CodeRuntime, options: PtcHarnessOptions = {}): PtcHarness {
  const trace: string[] = []
  const { approval, ...executorOptions } = options
  const tools = new ToolsService(approval === undefined ? {} : { approval })
  for (const tool of fixtureTools(trace)) tools.register(tool)
  tools.setExecutor(createPtcExecutor({ runtime, ...executorOptions }))
  const session = new MemorySession()
  const agent: Agent = { id: 'agent', session }
  let n = 0
  const batch = (calls: ToolCallBlock[], signal = new AbortController().signal): Promise<ToolBatchResult> =>
    tools.execute({ calls, signal, agent, log: { turn: 1, step: 1 } })
  return {
    tools,
    session,
    agent,
    trace,
    batch,
    async runCode(code, opts = {}) {
      const args = {
        code,
        description: opts.description ?? 'test program',
        ...(opts.timeoutMs !== undefined && { timeoutMs: opts.timeoutMs }),
      }
      const out = await batch(
        [{ type: 'tool_call', id: `run${++n}`, name: 'run_code', arguments: JSON.stringify(args) }],
        opts.signal,
      )
      return (out.results[0] as { result: ToolExecutionResult }).result
    },
  }
}

/** The text of a result's content. */
export function text(result: ToolExecutionResult): string {
  return result.content.map((b) => (b.type === 'text' ? b.text : `[${b.type}]`)).join('\n')
}
