/**
 * A sub-call whose timeout passed while its body ignores the signal is
 * abandoned inside the running program, over real backends: the program gets
 * a ToolCallError `timeoutMs + drainGraceMs` after the call started (as a
 * model-direct call returns at timeout + grace), can catch it and go on; the
 * log records the abandonment, and the body's eventual outcome is logged as
 * late and delivered to nothing.
 */
import type { CodeRuntime } from '@ptc/sandbox'
import { createPtcExecutor } from '@ptc/ptc'
import { text } from '@ptc/ptc/testing'
import {
  defineTool,
  MemorySession,
  ToolsService,
  type Agent,
  type ContentBlock,
  type JsonValue,
  type SessionEvent,
  type ToolExecutionResult,
} from '@ptc/tools'
import { installTimeoutPolicy } from '@ptc/tools/timeout'
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest'
import { backends, warmUp } from './backends.js'

/** Generous bound on scheduling noise (cold workers, a loaded machine shared with other suites). */
const SLACK_MS = 2000
/** The stuck tools' budget. */
const TIMEOUT_MS = 200
/** The executor's default drain grace. */
const GRACE_MS = 100
/** A wall far above timeout + grace: an abandonment seen here is the call's own, not the run's. */
const WALL_MS = 20_000

const output = {
  schema: { type: 'object', additionalProperties: false, properties: { ok: { type: 'boolean' } } },
  render: () => [{ type: 'text' as const, text: 'ok' }],
} as const

interface Harness {
  readonly tools: ToolsService
  readonly session: MemorySession
  /** Releases of stuck bodies that started and have not settled. */
  readonly pending: (() => void)[]
  /** When each body started and settled (ms since the epoch), by tool name. */
  readonly marks: { name: string; event: 'start' | 'end'; at: number }[]
  /** What the `tools/ptc-dispatch-log` waterfall was asked to shape: `[name, settlement]`. */
  readonly shaped: [string, string | undefined][]
  runCode(code: string): Promise<{ result: ToolExecutionResult; ms: number }>
}

/**
 * `stuck` (concurrency-safe) and `stuckWrite` (exclusive) have a 200 ms budget
 * and ignore their signal: they settle only when released. `quick` (safe) and
 * `write` (exclusive) settle at once. The timeout policy is installed.
 */
function harness(runtime: CodeRuntime): Harness {
  const pending: (() => void)[] = []
  const marks: Harness['marks'] = []
  const shaped: Harness['shaped'] = []
  const tools = new ToolsService()
  const stuckBody = (name: string) => () =>
    new Promise<{ ok: boolean }>((resolve) => {
      marks.push({ name, event: 'start', at: Date.now() })
      pending.push(() => {
        marks.push({ name, event: 'end', at: Date.now() })
        resolve({ ok: true })
      })
    })
  const quickBody = (name: string) => async () => {
    marks.push({ name, event: 'start', at: Date.now() })
    return { ok: true }
  }
  const base = { parameters: {}, output } as const
  tools.register(
    defineTool({
      ...base,
      name: 'stuck',
      description: 'Ignores its signal.',
      timeoutMs: TIMEOUT_MS,
      isConcurrencySafe: () => true,
      execute: stuckBody('stuck'),
    }),
  )
  tools.register(
    defineTool({
      ...base,
      name: 'stuckWrite',
      description: 'Exclusive; ignores its signal.',
      timeoutMs: TIMEOUT_MS,
      execute: stuckBody('stuckWrite'),
    }),
  )
  tools.register(
    defineTool({
      ...base,
      name: 'quick',
      description: 'Settles at once.',
      isConcurrencySafe: () => true,
      execute: quickBody('quick'),
    }),
  )
  tools.register(
    defineTool({ ...base, name: 'write', description: 'Exclusive; settles at once.', execute: quickBody('write') }),
  )
  installTimeoutPolicy(tools)
  tools.on('tools/ptc-dispatch-log', (dispatch, next): Promise<ContentBlock[]> => {
    shaped.push([dispatch.name, dispatch.settlement])
    return next()
  })
  tools.setExecutor(createPtcExecutor({ runtime }))
  const session = new MemorySession()
  const agent: Agent = { id: 'agent', session }
  return {
    tools,
    session,
    pending,
    marks,
    shaped,
    async runCode(code) {
      const started = Date.now()
      const batch = await tools.execute({
        calls: [
          {
            type: 'tool_call',
            id: 'run1',
            name: 'run_code',
            arguments: JSON.stringify({ code, description: 'stuck tools', timeoutMs: WALL_MS }),
          },
        ],
        signal: new AbortController().signal,
        agent,
        log: { turn: 1, step: 1 },
      })
      return { result: (batch.results[0] as { result: ToolExecutionResult }).result, ms: Date.now() - started }
    },
  }
}

const ofType = (events: readonly SessionEvent[], type: string): SessionEvent[] => events.filter((e) => e.type === type)
const codeOf = (event: SessionEvent | undefined): unknown =>
  (event?.error as { info?: { code?: string } } | undefined)?.info?.code
/** The sub-dispatch events in log order, as `[type, name, abandoned]`. */
const dispatchTrail = (events: readonly SessionEvent[]): unknown[][] =>
  events.filter((e) => e.type.startsWith('tool/ptc-dispatch')).map((e) => [e.type, e.name, e.abandoned])

/** When the first call of `name` started (its `tool/ptc-dispatch-start` event). */
const startTime = (events: readonly SessionEvent[], name: string): number =>
  ofType(events, 'tool/ptc-dispatch-start').find((e) => e.name === name)?.time ?? Number.NaN

/** The program's return value (`{ logs, result }`'s result). */
function returned(result: ToolExecutionResult): JsonValue | undefined {
  if (result.isError) throw new Error(`run_code failed: ${text(result)}`)
  return (result.value as { result?: JsonValue }).result
}

async function eventually(check: () => boolean, ms = 5000): Promise<void> {
  const until = Date.now() + ms
  while (!check()) {
    if (Date.now() > until) throw new Error('condition not met in time')
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
}

/** Report measured numbers (the suite asserts only generous bounds). */
function measured(label: string, values: Record<string, number>): void {
  console.info(
    `[mid-run-timeout] ${label}: ${Object.entries(values)
      .map(([k, v]) => `${k}=${v}ms`)
      .join(' ')}`,
  )
}

/** A guest-side catch that reports what the ToolCallError carries (`code` is null where the guest does not have it). */
const CATCH = `(e) => ({ isToolCallError: e instanceof ToolCallError, name: e.name, toolName: e.toolName, code: e.code === undefined ? null : e.code, message: e.message })`

for (const backend of backends) {
  describe.skipIf(backend.skip !== undefined)(
    `mid-run abandonment on ${backend.label}${backend.skip === undefined ? '' : ` (skipped: ${backend.skip})`}`,
    () => {
      let runtime: CodeRuntime
      let live: Harness | undefined
      beforeAll(async () => {
        runtime = backend.create()
        await warmUp(runtime)
      })
      afterAll(() => runtime.dispose())
      afterEach(() => {
        for (const release of live?.pending.splice(0) ?? []) release()
      })

      test('a timed-out call whose body ignores its signal rejects in the program with TOOL_TIMEOUT; the program catches it and goes on', async () => {
        const h = (live = harness(runtime))
        const { result, ms } = await h.runCode(`
        const caught = await tools.stuck({}).then(() => null, ${CATCH})
        const after = await tools.quick({})
        return { caught, after }`)
        const value = returned(result) as {
          caught: { isToolCallError: boolean; name: string; toolName: string; code: string | null; message: string }
          after: JsonValue
        }
        expect(value.caught).toMatchObject({ isToolCallError: true, name: 'ToolCallError', toolName: 'stuck' })
        expect(value.caught.message).toMatch(
          new RegExp(
            `^tool call timed out after ${TIMEOUT_MS} ms and was abandoned: it ignored its abort signal and had not settled ${GRACE_MS} ms later$`,
          ),
        )
        // The guest's ToolCallError does not carry `code` yet (sandbox/runtime's prelude); when it does, it must be TOOL_TIMEOUT.
        expect([null, 'TOOL_TIMEOUT']).toContain(value.caught.code)
        expect(value.after).toEqual({ ok: true })

        // Abandoned at timeout + grace, long before the run's wall; the stuck body is still running.
        // Measured from the stuck call's start event (logged before its policy stage arms the deadline).
        const stuckStart = startTime(h.session.events, 'stuck')
        const quickStart = h.marks.find((m) => m.name === 'quick' && m.event === 'start')?.at ?? Number.NaN
        measured(`${backend.label} safe`, { runCode: ms, stuckStartToNextCall: quickStart - stuckStart })
        expect(quickStart - stuckStart).toBeGreaterThanOrEqual(TIMEOUT_MS + GRACE_MS - 2)
        expect(quickStart - stuckStart).toBeLessThan(TIMEOUT_MS + GRACE_MS + SLACK_MS)
        // The whole run includes starting it (a loaded isolated-vm run took 2.7 s): it ended on its own, not at its wall.
        expect(ms).toBeLessThan(WALL_MS)
        expect(h.pending).toHaveLength(1)

        const events = h.session.events
        expect(ofType(events, 'tool/ptc-dispatch-start').map((e) => [e.subCallId, e.name])).toEqual([
          ['run1:ptc:1', 'stuck'],
          ['run1:ptc:2', 'quick'],
        ])
        expect(dispatchTrail(events)).toEqual([
          ['tool/ptc-dispatch-start', 'stuck', undefined],
          ['tool/ptc-dispatch', 'stuck', true],
          ['tool/ptc-dispatch-start', 'quick', undefined],
          ['tool/ptc-dispatch', 'quick', undefined],
        ])
        const [abandoned, settled] = ofType(events, 'tool/ptc-dispatch')
        expect(abandoned).toMatchObject({ subCallId: 'run1:ptc:1', isError: true, abandoned: true })
        expect(codeOf(abandoned)).toBe('TOOL_TIMEOUT')
        expect(settled).toMatchObject({ subCallId: 'run1:ptc:2', isError: false })

        // Released later by a timer: its late outcome is logged, once, and reaches nothing else.
        setTimeout(() => h.pending.splice(0).forEach((release) => release()), 100)
        await eventually(() => ofType(h.session.events, 'tool/ptc-dispatch-late').length === 1)
        const [late] = ofType(h.session.events, 'tool/ptc-dispatch-late')
        // The timeout policy's own timer fired, so the body's success became TOOL_TIMEOUT.
        expect(late).toMatchObject({
          rootCallId: 'run1',
          parentCallId: 'run1',
          subCallId: 'run1:ptc:1',
          name: 'stuck',
          isError: true,
        })
        expect(late?.abandoned).toBeUndefined()
        expect(codeOf(late)).toBe('TOOL_TIMEOUT')
        expect(ofType(h.session.events, 'tool/ptc-dispatch')).toHaveLength(2)
        expect(h.shaped).toEqual([
          ['stuck', 'abandoned'],
          ['quick', undefined],
          ['stuck', 'late'],
        ])
      })

      test('an exclusive call abandoned at its timeout releases the barrier: the next exclusive call runs while the first body still runs', async () => {
        const h = (live = harness(runtime))
        // Both submitted at once: the second waits behind the first's barrier.
        const { result, ms } = await h.runCode(`
        const first = tools.stuckWrite({}).then(() => 'settled', ${CATCH})
        const second = tools.write({})
        return { first: await first, second: await second }`)
        const value = returned(result) as { first: { toolName: string; message: string }; second: JsonValue }
        expect(value.first).toMatchObject({ toolName: 'stuckWrite' })
        expect(value.first.message).toMatch(new RegExp(`^tool call timed out after ${TIMEOUT_MS} ms and was abandoned`))
        expect(value.second).toEqual({ ok: true })

        const stuckStart = startTime(h.session.events, 'stuckWrite')
        const writeStart = h.marks.find((m) => m.name === 'write' && m.event === 'start')?.at ?? Number.NaN
        measured(`${backend.label} exclusive`, { runCode: ms, stuckStartToNextCall: writeStart - stuckStart })
        // The second exclusive call started only after the first was abandoned, and its body had not ended.
        expect(writeStart - stuckStart).toBeGreaterThanOrEqual(TIMEOUT_MS + GRACE_MS - 2)
        expect(writeStart - stuckStart).toBeLessThan(TIMEOUT_MS + GRACE_MS + SLACK_MS)
        expect(h.marks.some((m) => m.name === 'stuckWrite' && m.event === 'end')).toBe(false)
        expect(h.pending).toHaveLength(1)
        expect(dispatchTrail(h.session.events)).toEqual([
          ['tool/ptc-dispatch-start', 'stuckWrite', undefined],
          ['tool/ptc-dispatch', 'stuckWrite', true],
          ['tool/ptc-dispatch-start', 'write', undefined],
          ['tool/ptc-dispatch', 'write', undefined],
        ])
        expect(codeOf(ofType(h.session.events, 'tool/ptc-dispatch')[0])).toBe('TOOL_TIMEOUT')

        setTimeout(() => h.pending.splice(0).forEach((release) => release()), 50)
        await eventually(() => ofType(h.session.events, 'tool/ptc-dispatch-late').length === 1)
        expect(ofType(h.session.events, 'tool/ptc-dispatch-late')[0]).toMatchObject({
          subCallId: 'run1:ptc:1',
          name: 'stuckWrite',
        })
      })
    },
  )
}
