import { ToolsService, type ObjectJsonSchema, type ToolDefinition, type ToolExecution } from '@ptc/tools'
import { describe, expect, test } from 'vitest'
import { createPtcExecutor } from './executor.js'
import { RUNTIME_ANSWER_GRACE_MS } from './answered.js'
import { runCodeContent } from './transport.js'
import { FakeRuntime } from './testing/fake-runtime.js'
import { text } from './testing/fixtures.js'

/** A tool whose parameter and output schemas stay reachable (and mutable) after registration. */
function mutableTool(): { definition: ToolDefinition; parameters: ObjectJsonSchema; outputSchema: ObjectJsonSchema } {
  const parameters: ObjectJsonSchema = {
    type: 'object',
    properties: { q: { type: 'string' } },
    required: ['q'],
    additionalProperties: false,
  }
  const outputSchema: ObjectJsonSchema = {
    type: 'object',
    properties: { hits: { type: 'integer' } },
    required: ['hits'],
    additionalProperties: false,
  }
  const definition: ToolDefinition = {
    name: 'find',
    description: 'Find things.',
    parameters,
    output: { schema: outputSchema, render: (_args, value) => [{ type: 'text', text: JSON.stringify(value) }] },
    execute: () => Promise.resolve({ hits: 1 }),
  }
  return { definition, parameters, outputSchema }
}

/** A service with `find` registered and a PTC executor over `runtime`. */
function registered(runtime: FakeRuntime): {
  tools: ToolsService
  parameters: ObjectJsonSchema
  outputSchema: ObjectJsonSchema
} {
  const tools = new ToolsService()
  const { definition, parameters, outputSchema } = mutableTool()
  tools.register(definition)
  tools.setExecutor(createPtcExecutor({ runtime }))
  return { tools, parameters, outputSchema }
}

/** Add a property and change a type in both schemas of the registered definition. */
function mutate(parameters: ObjectJsonSchema, outputSchema: ObjectJsonSchema): void {
  parameters.properties = { q: { type: 'number' }, extra: { type: 'boolean' } }
  outputSchema.properties = { hits: { type: 'string' } }
}

const REGISTERED_SCHEMA = {
  name: 'find',
  description: 'Find things.',
  parameters: { type: 'object', properties: { q: { type: 'string' } }, required: ['q'], additionalProperties: false },
}

describe('the transport reads the copy frozen at registration', () => {
  test('mutating a definition after registration changes neither the SDK text nor schemas()', () => {
    const { tools, parameters, outputSchema } = registered(new FakeRuntime())
    const sdk = tools
      .modelInput()
      .sections.map((s) => s.text)
      .join('\n\n')
    expect(sdk).toContain('interface ToolArgsMap {\n  find: {\n    q: string\n  }\n}')
    expect(sdk).toContain('interface ToolOutputMap {\n  find: {\n    hits: number\n  }\n}')
    mutate(parameters, outputSchema)
    expect(
      tools
        .modelInput()
        .sections.map((s) => s.text)
        .join('\n\n'),
    ).toBe(sdk)
    expect(tools.schemas()).toEqual([REGISTERED_SCHEMA])
  })

  test("a sub-call's schema is the registered one, frozen, after the definition was mutated", async () => {
    const runtime = new FakeRuntime()
    const { tools, parameters, outputSchema } = registered(runtime)
    mutate(parameters, outputSchema)
    const seen: ToolExecution[] = []
    tools.on('tools/pre-execute', (exec, next) => {
      if (exec.name === 'find') seen.push(exec)
      return next()
    })
    const code = runtime.define('find', async (t) => t.find!({ q: 'x' }))
    const out = await tools.execute({
      calls: [
        { type: 'tool_call', id: 'r', name: 'run_code', arguments: JSON.stringify({ code, description: 'find' }) },
      ],
      signal: new AbortController().signal,
    })
    expect(text(out.results[0]!.result)).toContain('"hits": 1')
    expect(seen.map((e) => e.schema)).toEqual([REGISTERED_SCHEMA])
    expect(Object.isFrozen(seen[0]?.schema?.parameters.properties)).toBe(true)
  })
})

describe('the text of a program awaiting approval', () => {
  test("shows each awaited call's arguments, the first 1 024 characters of long ones", () => {
    const awaiting = {
      token: 't',
      calls: [
        { tool: 'remove', arguments: { path: '/tmp/x' }, reason: 'removes a file' },
        { tool: 'upload', arguments: { blob: 'b'.repeat(5_000_000) } },
      ],
    }
    const [content] = runCodeContent({ logs: ['a log'], awaiting })
    expect(content.text).toMatch(
      /^a log\n\(the program is waiting for approval of tools\.remove\(\{"path":"\/tmp\/x"\}\) \(removes a file\), tools\.upload\(\{"blob":"b+… \(5000011 characters\)\); it continues/,
    )
    expect(content.text.length).toBeLessThan(1300)
  })

  test('names the calls up to 16 Ki characters in all, then how many more there are', () => {
    const calls = Array.from({ length: 256 }, (_, i) => ({
      tool: 'upload',
      arguments: { n: i, blob: 'b'.repeat(2_000) },
      reason: 'sends a file',
    }))
    const [content] = runCodeContent({ logs: [], awaiting: { token: 't', calls } })
    // Each call takes about 1 070 characters (1 024 of its arguments): fifteen stay under 16 Ki, the sixteenth passes it.
    const args = JSON.stringify(calls[0]?.arguments)
    const one = `tools.upload(${args.slice(0, 1024)}… (${args.length} characters)) (sends a file)`
    expect(content.text.startsWith(`(the program is waiting for approval of ${one}, `)).toBe(true)
    expect(15 * one.length).toBeLessThan(16 * 1024)
    expect(16 * one.length).toBeGreaterThanOrEqual(16 * 1024)
    expect(content.text.match(/tools\.upload\(/g)).toHaveLength(16)
    expect(content.text).toContain('{"n":15,')
    expect(content.text).toMatch(/, and 240 more calls; it continues where it waited/)
    expect(content.text.length).toBeLessThan(16 * 1024 + 1_500)
  })
})

describe('a runtime that never answers', () => {
  test(`run_code gives the run up ${RUNTIME_ANSWER_GRACE_MS} ms after its wall, as a timeout that says so; a long run's program is aborted`, async () => {
    let signal: AbortSignal | undefined
    // A third-party CodeRuntime that ignores its wall limit and its signal: its run() never settles.
    const runtime = new (class extends FakeRuntime {
      override run(request: Parameters<FakeRuntime['run']>[0]): Promise<never> {
        signal = request.signal
        return new Promise<never>(() => undefined)
      }
    })({ wallMs: 100 })
    const tools = new ToolsService()
    tools.setExecutor(createPtcExecutor({ runtime, longRuns: { returnAfterMs: 60_000 } }))
    const started = Date.now()
    const batch = await tools.execute({
      calls: [
        {
          type: 'tool_call',
          id: 'c1',
          name: 'run_code',
          arguments: JSON.stringify({ code: 'hang', description: 'd' }),
        },
      ],
      signal: new AbortController().signal,
    })
    const result = batch.results[0]?.result
    expect(result?.isError).toBe(true)
    expect(result !== undefined && text(result)).toContain(
      `the run did not end by its wall limit (at most 100 ms): the fake sandbox runtime had not answered ${RUNTIME_ANSWER_GRACE_MS} ms after that, and the run was given up`,
    )
    expect(result?.isError === true && result.error.info?.code).toBe('CODE_RUN_FAILED')
    // Not sooner than the wall and the grace (a behaviour, not a speed: the runtime was given all of it).
    expect(Date.now() - started).toBeGreaterThanOrEqual(100 + RUNTIME_ANSWER_GRACE_MS - 20)
    expect(signal?.aborted).toBe(true)
  }, 30_000)
})
