/**
 * Settlement over real backends: every run_code settles within its wall limit
 * plus a small grace, whatever the tools do. A tool body that ignores its
 * abort signal and never settles (or settles long after the program ended) is
 * recorded as abandoned; its late outcome is logged and reaches nothing else.
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { CodeRuntime } from '@ptc/sandbox'
import { createPtcExecutor, type PtcExecutorOptions } from '@ptc/ptc'
import { text } from '@ptc/ptc/testing'
import {
  defineTool,
  MemorySession,
  ToolsService,
  type Agent,
  type Session,
  type SessionEvent,
  type ToolBatchResult,
  type ToolExecutionResult,
} from '@ptc/tools'
import { JsonlSession, readJsonlSession } from '@ptc/tools/session'
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest'
import { backends, warmUp } from './backends.js'

/** Generous bound on how long after its wall a run may take to return (cold workers, a loaded machine). */
const SLACK_MS = 2000

interface Stubborn {
  readonly tools: ToolsService
  readonly agent: Agent
  /** Bodies of `hang` calls that started and have not been released. */
  readonly pending: (() => void)[]
  /** How many `hang` bodies started and how many settled. */
  readonly counts: { started: number; settled: number }
  runCode(
    code: string,
    options?: { timeoutMs?: number; signal?: AbortSignal },
  ): Promise<{ result: ToolExecutionResult; batch: ToolBatchResult; ms: number }>
}

/**
 * `hang` ignores its signal: it settles only when released, or `settleAfterMs`
 * after it started. Its body then asks for a deferred context and a turn end,
 * which must never reach a finished run. `quick` settles at once; `late` ignores
 * its signal but settles `lateMs` after the abort (inside the grace).
 */
function stubborn(
  runtime: CodeRuntime,
  session: Session,
  options: Omit<PtcExecutorOptions, 'runtime'> & { settleAfterMs?: number; lateMs?: number } = {},
): Stubborn {
  const { settleAfterMs, lateMs = 20, ...executorOptions } = options
  const pending: (() => void)[] = []
  const counts = { started: 0, settled: 0 }
  const tools = new ToolsService()
  const output = {
    schema: { type: 'object', additionalProperties: false, properties: { ok: { type: 'boolean' } } },
    render: () => [{ type: 'text' as const, text: 'ok' }],
  } as const
  tools.register(
    defineTool({
      name: 'hang',
      description: 'Never listens to its signal.',
      parameters: {},
      output,
      isConcurrencySafe: () => true,
      execute: (_args, ctx) =>
        new Promise((resolve) => {
          counts.started++
          const release = (): void => {
            counts.settled++
            ctx.deferContext({ role: 'user', content: [{ type: 'text', text: 'late context' }] })
            ctx.concludeTurn()
            resolve({ ok: true })
          }
          pending.push(release)
          if (settleAfterMs !== undefined) setTimeout(release, settleAfterMs)
        }),
    }),
  )
  tools.register(
    defineTool({
      name: 'late',
      description: 'Settles a little after its signal aborted.',
      parameters: {},
      output,
      isConcurrencySafe: () => true,
      execute: (_args, ctx) =>
        new Promise((resolve) =>
          ctx.signal.addEventListener('abort', () => setTimeout(() => resolve({ ok: true }), lateMs), { once: true }),
        ),
    }),
  )
  tools.register(
    defineTool({
      name: 'quick',
      description: 'Settles at once.',
      parameters: {},
      output,
      isConcurrencySafe: () => true,
      execute: async () => ({ ok: true }),
    }),
  )
  tools.setExecutor(createPtcExecutor({ runtime, ...executorOptions }))
  const agent: Agent = { id: 'agent', session }
  let n = 0
  return {
    tools,
    agent,
    pending,
    counts,
    async runCode(code, opts = {}) {
      const args = {
        code,
        description: 'stubborn tools',
        ...(opts.timeoutMs !== undefined && { timeoutMs: opts.timeoutMs }),
      }
      const started = Date.now()
      const batch = await tools.execute({
        calls: [{ type: 'tool_call', id: `run${++n}`, name: 'run_code', arguments: JSON.stringify(args) }],
        signal: opts.signal ?? new AbortController().signal,
        agent,
        log: { turn: 1, step: 1 },
      })
      return { result: (batch.results[0] as { result: ToolExecutionResult }).result, batch, ms: Date.now() - started }
    },
  }
}

const ofType = (events: readonly SessionEvent[], type: string): SessionEvent[] => events.filter((e) => e.type === type)
const codeOf = (event: SessionEvent | undefined): unknown =>
  (event?.error as { info?: { code?: string } } | undefined)?.info?.code

/** Wait (bounded) until `check` holds. */
async function eventually(check: () => boolean, ms = 5000): Promise<void> {
  const until = Date.now() + ms
  while (!check()) {
    if (Date.now() > until) throw new Error('condition not met in time')
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
}

async function eventuallyAsync(check: () => Promise<boolean>, ms = 5000): Promise<void> {
  const until = Date.now() + ms
  while (!(await check())) {
    if (Date.now() > until) throw new Error('condition not met in time')
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
}

/** Every started sub-call settled exactly once in the log. */
function expectStartedSettleOnce(events: readonly SessionEvent[]): void {
  const started = ofType(events, 'tool/ptc-dispatch-start').map((e) => e.subCallId)
  const settled = ofType(events, 'tool/ptc-dispatch').map((e) => e.subCallId)
  expect(settled.slice().sort()).toEqual(started.slice().sort())
}

for (const backend of backends) {
  describe.skipIf(backend.skip !== undefined)(
    `settlement on ${backend.label}${backend.skip === undefined ? '' : ` (skipped: ${backend.skip})`}`,
    () => {
      let runtime: CodeRuntime
      let live: Stubborn | undefined
      beforeAll(async () => {
        runtime = backend.create()
        await warmUp(runtime)
      })
      afterAll(() => runtime.dispose())
      // Release whatever a test left hanging, so no body outlives its test.
      afterEach(() => {
        for (const release of live?.pending.splice(0) ?? []) release()
      })
      const harness = (session: Session, options?: Parameters<typeof stubborn>[2]): Stubborn =>
        (live = stubborn(runtime, session, options))

      test('a program awaiting a tool that ignores its signal ends at its wall; the call is abandoned as TOOL_TIMEOUT', async () => {
        const session = new MemorySession()
        const h = harness(session)
        // 800 ms was not always enough for a cold isolated-vm engine to reach the call on a machine loaded 4x.
        const { result, ms } = await h.runCode('await tools.hang({}); return "unreachable"', { timeoutMs: 3000 })
        expect(ms).toBeLessThan(3000 + SLACK_MS)
        expect(h.counts.started).toBe(1)
        expect(result.isError && result.error.info?.code).toBe('CODE_RUN_FAILED')
        expect(text(result)).toMatch(/^Error: code run failed \(timeout\)/)
        expectStartedSettleOnce(session.events)
        const [settle] = ofType(session.events, 'tool/ptc-dispatch')
        expect(settle).toMatchObject({ name: 'hang', subCallId: 'run1:ptc:1', isError: true, abandoned: true })
        expect(codeOf(settle)).toBe('TOOL_TIMEOUT')
        expect(h.counts).toEqual({ started: 1, settled: 0 })
      })

      test('a program that returns with a stubborn call in flight returns; the late settle is logged and reaches nothing', async () => {
        const session = new MemorySession()
        const h = harness(session, { settleAfterMs: 600 })
        // Awaiting the first call lets the second start (a backend may start calls only when the program yields).
        const { result, batch } = await h.runCode(
          'const first = tools.quick({}); tools.hang({}); await first; return "done"',
        )
        expect(result.isError).toBe(false)
        expect(text(result)).toBe('done')
        expectStartedSettleOnce(session.events)
        const settles = ofType(session.events, 'tool/ptc-dispatch')
        expect(settles.map((e) => [e.name, e.isError, e.abandoned])).toEqual([
          ['quick', false, undefined],
          ['hang', true, true],
        ])
        expect(codeOf(settles[1])).toBe('ABORTED')
        expect(h.counts).toEqual({ started: 1, settled: 0 })
        expect(ofType(session.events, 'tool/ptc-dispatch-late')).toEqual([])
        const before = session.events.length

        await eventually(() => ofType(session.events, 'tool/ptc-dispatch-late').length === 1)
        const [late] = ofType(session.events, 'tool/ptc-dispatch-late')
        // The body ran to its end; the pipeline turned its success into ABORTED (the run signal had aborted).
        expect(late).toMatchObject({
          rootCallId: 'run1',
          parentCallId: 'run1',
          subCallId: 'run1:ptc:2',
          name: 'hang',
          isError: true,
        })
        expect(codeOf(late)).toBe('ABORTED')
        expect(session.events.slice(before).map((e) => e.type)).toEqual(['tool/ptc-dispatch-late'])
        // Still exactly one settle event per started call; the finished batch got no late context or turn end.
        expect(ofType(session.events, 'tool/ptc-dispatch')).toHaveLength(2)
        expect(batch.additionalContexts).toEqual([])
        expect(batch.concluded).toBe(false)
        expect(result.isError === false && result.value).toEqual({ logs: [], result: 'done' })
      })

      test('aborting the caller ends the run; the stubborn call is abandoned as ABORTED', async () => {
        const session = new MemorySession()
        const h = harness(session)
        const controller = new AbortController()
        const started = h.runCode('await tools.hang({}); return "unreachable"', { signal: controller.signal })
        await eventually(() => h.counts.started === 1)
        const abortedAt = Date.now()
        controller.abort(new Error('user pressed stop'))
        const { result } = await started
        expect(Date.now() - abortedAt).toBeLessThan(SLACK_MS)
        expect(result.isError && result.error.info?.code).toBe('CODE_RUN_FAILED')
        expect(text(result)).toMatch(/^Error: code run failed \(abort\)/)
        expectStartedSettleOnce(session.events)
        const [settle] = ofType(session.events, 'tool/ptc-dispatch')
        expect(settle).toMatchObject({ name: 'hang', isError: true, abandoned: true })
        expect(codeOf(settle)).toBe('ABORTED')
      })

      test('many stubborn calls at once (JSON Lines session): the started ones are abandoned, the queued ones log nothing', async () => {
        const dir = await mkdtemp(join(tmpdir(), 'ptc-settlement-'))
        try {
          const session = await JsonlSession.open(join(dir, 'session.jsonl'))
          const h = harness(session, { maxParallelSubCalls: 4 })
          const { result, ms } = await h.runCode(
            'await Promise.all(Array.from({ length: 10 }, () => tools.hang({})))',
            { timeoutMs: 800 },
          )
          expect(ms).toBeLessThan(800 + SLACK_MS)
          expect(text(result)).toMatch(/^Error: code run failed \(timeout\)/)
          expect(h.counts.started).toBe(4)
          // Every event was written before run_code returned.
          const { events } = await readJsonlSession(session.path)
          expect(ofType(events, 'tool/ptc-dispatch-start').map((e) => e.subCallId)).toEqual([
            'run1:ptc:1',
            'run1:ptc:2',
            'run1:ptc:3',
            'run1:ptc:4',
          ])
          expectStartedSettleOnce(events)
          for (const settle of ofType(events, 'tool/ptc-dispatch')) {
            expect(settle).toMatchObject({ isError: true, abandoned: true })
            expect(codeOf(settle)).toBe('TOOL_TIMEOUT')
          }
          // Released now, the bodies' late settles are appended to the file too.
          for (const release of h.pending.splice(0)) release()
          let after = events
          await eventuallyAsync(
            async () =>
              ofType((after = (await readJsonlSession(session.path)).events), 'tool/ptc-dispatch-late').length === 4,
          )
          await session.close()
          expect(
            ofType(after, 'tool/ptc-dispatch-late')
              .map((e) => e.subCallId)
              .sort(),
          ).toEqual(['run1:ptc:1', 'run1:ptc:2', 'run1:ptc:3', 'run1:ptc:4'])
          expect(ofType(after, 'tool/ptc-dispatch')).toHaveLength(4)
        } finally {
          await rm(dir, { recursive: true, force: true })
        }
      })

      test('a tool that ignores its signal but settles within the grace is not abandoned', async () => {
        const session = new MemorySession()
        const h = harness(session, { drainGraceMs: 1000, lateMs: 20 })
        const { result } = await h.runCode('const first = tools.quick({}); tools.late({}); await first; return "done"')
        expect(text(result)).toBe('done')
        expectStartedSettleOnce(session.events)
        const settles = ofType(session.events, 'tool/ptc-dispatch')
        expect(settles.map((e) => [e.name, e.abandoned])).toEqual([
          ['quick', undefined],
          ['late', undefined],
        ])
        // It settled after the abort: the pipeline turned its success into ABORTED, but it was not abandoned.
        expect(codeOf(settles[1])).toBe('ABORTED')
        expect(ofType(session.events, 'tool/ptc-dispatch-late')).toEqual([])
      })

      test('the next run on the same runtime works after an abandoned call', async () => {
        const session = new MemorySession()
        const h = harness(session)
        await h.runCode('const first = tools.quick({}); tools.hang({}); await first; return 1')
        expect(ofType(session.events, 'tool/ptc-dispatch').map((e) => e.abandoned)).toEqual([undefined, true])
        const { result } = await h.runCode('await tools.quick({}); return 2')
        expect(text(result)).toBe('2')
      })
    },
  )
}
