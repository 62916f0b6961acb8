/**
 * OpenTelemetry traces (issue 51): a `run_code` call is a span and each sub-call a child span, named and tagged as
 * the GenAI semantic conventions name a tool's execution; a durable suspension and its resumption are events.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base'
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base'
import { createQuickJSRuntime } from '@ptc/sandbox-quickjs'
import { createFileSessionStore } from '@ptc/sandbox/session'
import { ptcHarness, type PtcHarnessOptions } from '@ptc/ptc/testing'
import { afterAll, beforeEach, describe, expect, test } from 'vitest'

const dir = mkdtempSync(join(tmpdir(), 'ptc-tracing-'))
const runtime = createQuickJSRuntime({ isolation: 'inline', poolSize: 1 })
const exporter = new InMemorySpanExporter()
const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] })
const tracer = provider.getTracer('test')
afterAll(async () => {
  await runtime.dispose()
  await provider.shutdown()
  rmSync(dir, { recursive: true, force: true })
})
beforeEach(() => exporter.reset())

/** A harness whose `write` calls wait for a person (durable approval) and whose lookups of `secret` are denied. */
function harness(options: PtcHarnessOptions) {
  const h = ptcHarness(runtime, {
    durable: { store: createFileSessionStore({ directory: dir }) },
    approval: { request: async () => 'deferred' },
    ...options,
  })
  h.tools.on('tools/pre-execute', (exec, next) => {
    if (exec.name === 'write') return { kind: 'ask', reason: 'writes' }
    if ((exec.arguments as { key?: unknown }).key === 'secret') return { kind: 'deny', reason: 'not this key' }
    return next()
  })
  return h
}

const PROGRAM = `const found = await tools.lookup({ key: 'abc' })
let refused
try { await tools.lookup({ key: 'secret' }) } catch (e) { refused = e.code }
const w = await tools.write({ key: 'k' })
return [found.value, refused, w.written]`

/** A span's parent span id (the SDK's field name differs between major versions). */
function parentOf(span: ReadableSpan): string | undefined {
  const s = span as unknown as { parentSpanContext?: { spanId: string }; parentSpanId?: string }
  return s.parentSpanContext?.spanId ?? s.parentSpanId
}

describe('tracing', () => {
  test('a program with three sub-calls, one denied and one suspended for approval and resumed, is a span tree', async () => {
    const h = harness({ tracing: { tracer } })
    const suspended = await h.runCode(PROGRAM)
    const token = (suspended.value as { awaiting: { token: string } }).awaiting.token
    const first = exporter.getFinishedSpans()
    exporter.reset()
    const resumed = await h.tools.resume({
      token,
      decision: 'allowed-once',
      agent: h.agent,
      signal: new AbortController().signal,
    })
    expect((resumed.results[0]?.result.value as { result?: unknown }).result).toEqual([3, 'DENIED', 'k'])
    const second = exporter.getFinishedSpans()

    // The suspended run: run_code and its three sub-calls under it.
    const run = first.find((s) => s.name === 'execute_tool run_code')
    expect(run?.attributes).toMatchObject({
      'gen_ai.operation.name': 'execute_tool',
      'gen_ai.tool.name': 'run_code',
      'gen_ai.tool.call.id': 'run1',
      'ptc.run.suspended': true,
      'ptc.run.sub_calls': 3,
    })
    expect(typeof run?.attributes['ptc.run.cpu_ms']).toBe('number')
    expect(run?.events.map((e) => [e.name, e.attributes])).toEqual([
      ['ptc.durable.suspend', { 'ptc.durable.awaiting': ['write'] }],
    ])
    const calls = first.filter((s) => s !== run)
    expect(calls.map((s) => [s.name, parentOf(s) === run?.spanContext().spanId])).toEqual([
      ['execute_tool lookup', true],
      ['execute_tool lookup', true],
      ['execute_tool write', true],
    ])
    const [found, denied, deferred] = calls
    expect(found?.status.code).toBe(0)
    expect(found?.attributes['gen_ai.tool.call.id']).toMatch(/^run1/)
    expect(denied?.status).toMatchObject({ code: 2 })
    expect(denied?.attributes['error.type']).toBe('DENIED')
    expect(deferred?.attributes).toMatchObject({ 'error.type': 'APPROVAL_DEFERRED', 'ptc.sub_call.deferred': true })
    expect(deferred?.status.code).toBe(0)
    // No content unless the harness opts in.
    for (const span of first) expect(span.attributes['gen_ai.tool.call.arguments']).toBeUndefined()

    // The resumption: a span of the same call, with the decision as an event, and the approved write under it.
    const again = second.find((s) => s.name === 'execute_tool run_code')
    expect(again?.attributes['gen_ai.tool.call.id']).toBe('run1')
    expect(again?.attributes['ptc.run.suspended']).toBeUndefined()
    expect(again?.events.map((e) => [e.name, e.attributes])).toEqual([
      ['ptc.durable.resume', { 'ptc.durable.decisions': ['allowed-once'] }],
    ])
    const write = second.filter((s) => s !== again)
    expect(write.map((s) => [s.name, parentOf(s) === again?.spanContext().spanId, s.status.code])).toEqual([
      ['execute_tool write', true, 0],
    ])
    // The call made again is a sub-call of its own, numbered on from the suspended run's.
    expect(deferred?.attributes['gen_ai.tool.call.id']).toBe('run1:ptc:3')
    expect(write[0]?.attributes['gen_ai.tool.call.id']).toBe('run1:ptc:4')
  })

  test('recordContent puts arguments and result text on the spans; a failed run records its error kind', async () => {
    const h = harness({ tracing: { tracer, recordContent: true } })
    await h.runCode(`await tools.lookup({ key: 'abc' }); throw new Error('boom')`)
    const spans = exporter.getFinishedSpans()
    const lookup = spans.find((s) => s.name === 'execute_tool lookup')
    expect(lookup?.attributes['gen_ai.tool.call.arguments']).toBe('{"key":"abc"}')
    expect(lookup?.attributes['gen_ai.tool.call.result']).toBe('abc=3')
    const run = spans.find((s) => s.name === 'execute_tool run_code')
    expect(JSON.parse(String(run?.attributes['gen_ai.tool.call.arguments']))).toMatchObject({
      code: expect.any(String),
    })
    expect(run?.attributes['error.type']).toBe('exception')
    expect(run?.status).toMatchObject({ code: 2, message: expect.stringContaining('boom') })
  })

  test('tracing: false makes no spans, and a tracer that is not one is refused with what to pass', async () => {
    const h = harness({ tracing: false })
    await h.runCode(`return 1`)
    expect(exporter.getFinishedSpans()).toEqual([])
    expect(() => harness({ tracing: { tracer: {} } })).toThrow(/tracing.tracer must be an OpenTelemetry Tracer/)
  })
})
