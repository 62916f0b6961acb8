import { defineTool, presentCall, type ImageBlock, type JsonValue, type ToolExecution } from '@ptc/tools'
import { describe, expect, test } from 'vitest'
import { FakeFailure, FakeRuntime } from './testing/fake-runtime.js'
import { ptcHarness, sleep, text } from './testing/fixtures.js'

describe('run_code over a fake runtime (the bridge)', () => {
  test('sub-calls get ids <parent>:ptc:<n> in submission order, the run_code token as parent and the root call id', async () => {
    const runtime = new FakeRuntime()
    const h = ptcHarness(runtime)
    const seen: ToolExecution[] = []
    let outer: ToolExecution | undefined
    h.tools.on('tools/pre-execute', (exec, next) => {
      if (exec.name === 'run_code') outer = exec
      else seen.push(exec)
      return next()
    })
    const code = runtime.define('two', async (tools) => [
      await tools.lookup!({ key: 'a' }),
      await tools.lookup!({ key: 'bb' }),
    ])
    const result = await h.runCode(code)
    expect(result.isError).toBe(false)
    expect(seen.map((e) => e.callId)).toEqual(['run1:ptc:1', 'run1:ptc:2'])
    expect(seen.every((e) => e.parent === outer?.token && e.rootCallId === 'run1' && e.agent === h.agent)).toBe(true)
    expect(seen[0]?.schema).toMatchObject({ name: 'lookup', description: 'Look up a key.' })
    expect(Object.isFrozen(seen[0]?.schema)).toBe(true)
    expect(text(result)).toContain('"value": 2')
  })

  test('in code mode a model-direct call of a tool is UNKNOWN_TOOL with a hint, decided before any policy', async () => {
    const h = ptcHarness(new FakeRuntime())
    let policyRan = false
    h.tools.on('tools/pre-execute', (_exec, next) => {
      policyRan = true
      return next()
    })
    const out = await h.batch([{ type: 'tool_call', id: 'x', name: 'lookup', arguments: '{"key":"a"}' }])
    const result = out.results[0]!.result
    expect(result.isError && result.error.info?.code).toBe('UNKNOWN_TOOL')
    expect(text(result)).toMatch(/reachable only from a program/)
    expect(policyRan).toBe(false)
  })

  test('modelInput in code mode declares exactly run_code and carries the SDK declarations of visible tools', () => {
    const h = ptcHarness(new FakeRuntime())
    const input = h.tools.modelInput(h.agent)
    expect(input.schemas.map((s) => s.name)).toEqual(['run_code'])
    const sdk = input.sections.map((s) => s.text).join('\n')
    expect(sdk).toContain('lookup')
    expect(sdk).toContain('write')
    expect(sdk).toContain('Promise.all')
  })

  test('both mode declares the native tools plus run_code, and a direct native call runs', async () => {
    const h = ptcHarness(new FakeRuntime(), { mode: 'both' })
    expect(h.tools.modelInput(h.agent).schemas.map((s) => s.name)).toEqual(['lookup', 'write', 'run_code'])
    const out = await h.batch([{ type: 'tool_call', id: 'x', name: 'lookup', arguments: '{"key":"abc"}' }])
    expect(text(out.results[0]!.result)).toBe('abc=3')
  })

  test.each([
    ['a whitespace-only description', { code: 'x', description: '   ' }, /description must not be blank/],
    ['a non-string program', { code: 42, description: 'd' }, /code must be a string/],
    [
      'a timeout above the cap',
      { code: 'x', description: 'd', timeoutMs: 10_000_000 },
      /timeoutMs must be at most 120000 ms/,
    ],
    ['an unknown argument', { code: 'x', description: 'd', language: 'python' }, /language is not a run_code argument/],
  ])('run_code rejects %s with INVALID_ARGS', async (_label, args, message) => {
    const h = ptcHarness(new FakeRuntime())
    const out = await h.batch([{ type: 'tool_call', id: 'r', name: 'run_code', arguments: JSON.stringify(args) }])
    const result = out.results[0]!.result
    expect(result.isError && result.error.info?.code).toBe('INVALID_ARGS')
    expect(text(result)).toMatch(message)
  })

  test('safe calls overlap up to maxParallelSubCalls; results commit in submission order', async () => {
    const runtime = new FakeRuntime()
    const h = ptcHarness(runtime, { maxParallelSubCalls: 3 })
    let running = 0
    let peak = 0
    h.tools.on('tools/execute', async (exec, next) => {
      if (exec.name === 'run_code') return next()
      peak = Math.max(peak, ++running)
      try {
        return await next()
      } finally {
        running--
      }
    })
    const order: string[] = []
    const code = runtime.define('fan', async (tools) => {
      const keys = ['k1', 'k2', 'k3', 'k4', 'k5', 'k6']
      await Promise.all(keys.map((key, i) => tools.lookup!({ key, delayMs: 30 - i * 5 }).then(() => order.push(key))))
      return null
    })
    const result = await h.runCode(code)
    expect(result.isError).toBe(false)
    expect(peak).toBe(3)
    expect(order).toEqual(['k1', 'k2', 'k3', 'k4', 'k5', 'k6'])
  })

  test('an exclusive call runs alone and holds the barrier through its commit', async () => {
    const runtime = new FakeRuntime()
    const h = ptcHarness(runtime)
    const code = runtime.define('mixed', async (tools) => {
      await Promise.all([
        tools.lookup!({ key: 'a', delayMs: 20 }),
        tools.write!({ key: 'w', delayMs: 10 }),
        tools.lookup!({ key: 'b' }),
      ])
      return null
    })
    await h.runCode(code)
    expect(h.trace).toEqual(['start a', 'end a', 'start write w', 'end write w', 'start b', 'end b'])
  })

  test('policy stages never overlap, while bodies do', async () => {
    const runtime = new FakeRuntime()
    const h = ptcHarness(runtime)
    let inPolicy = 0
    let overlap = false
    h.tools.on('tools/pre-execute', async (exec, next) => {
      if (exec.name === 'run_code') return next()
      if (++inPolicy > 1) overlap = true
      await sleep(5)
      inPolicy--
      return next()
    })
    const code = runtime.define('par', async (tools) =>
      Promise.all(['a', 'b', 'c'].map((key) => tools.lookup!({ key, delayMs: 150 }))),
    )
    await h.runCode(code)
    expect(overlap).toBe(false)
    // every body started before the first one ended: the bodies overlapped
    expect(h.trace.slice(0, 3)).toEqual(['start a', 'start b', 'start c'])
  })

  test('the session log has a start and a settle per started call, reshaped by the dispatch-log waterfall', async () => {
    const runtime = new FakeRuntime()
    const h = ptcHarness(runtime)
    h.tools.on('tools/ptc-dispatch-log', async (d, next) =>
      d.name === 'lookup' ? [{ type: 'text', text: 'redacted' }] : next(),
    )
    const code = runtime.define('log', async (tools) => {
      await tools.lookup!({ key: 'a' })
      await tools.write!({ key: 'w' })
      return 'done'
    })
    const result = await h.runCode(code)
    expect(text(result)).toBe('done')
    const ptc = h.session.events.filter((e) => e.type.startsWith('tool/ptc'))
    expect(ptc.map((e) => `${e.type} ${String(e.subCallId)}`)).toEqual([
      'tool/ptc-dispatch-start run1:ptc:1',
      'tool/ptc-dispatch run1:ptc:1',
      'tool/ptc-dispatch-start run1:ptc:2',
      'tool/ptc-dispatch run1:ptc:2',
    ])
    expect(ptc[1]).toMatchObject({
      rootCallId: 'run1',
      parentCallId: 'run1',
      name: 'lookup',
      isError: false,
      content: [{ type: 'text', text: 'redacted' }],
    })
    expect(ptc[3]).toMatchObject({ name: 'write', content: [{ type: 'text', text: 'wrote w' }] })
    expect(ptc[0]).toMatchObject({ arguments: { key: 'a' } })
    // every ptc event precedes the run_code result
    const types = h.session.events.map((e) => e.type)
    expect(types.lastIndexOf('tool/ptc-dispatch')).toBeLessThan(types.indexOf('tool/result'))
  })

  test("a sub-call's presentationMeta is stored on its tool/ptc-dispatch event, as a direct call's is on tool/result", async () => {
    const runtime = new FakeRuntime()
    const h = ptcHarness(runtime, { mode: 'both' })
    h.tools.register(
      defineTool({
        name: 'count',
        description: 'Count the letters of a word.',
        parameters: { word: { type: 'string', required: true } },
        output: {
          schema: {
            type: 'object',
            additionalProperties: false,
            properties: { n: { type: 'integer', required: true } },
          },
          render: (_args, value) => [{ type: 'text', text: String(value.n) }],
          presentationMeta: (args, value) => ({ card: 'count', word: args.word, n: value.n }),
        },
        execute: async ({ word }) => ({ n: word.length }),
      }),
    )
    const result = await h.runCode(runtime.define('count', async (tools) => tools.count!({ word: 'abc' })))
    expect(result.isError).toBe(false)
    expect(h.session.events.find((e) => e.type === 'tool/ptc-dispatch')).toMatchObject({
      name: 'count',
      meta: { card: 'count', word: 'abc', n: 3 },
    })
    await h.batch([{ type: 'tool_call', id: 'direct', name: 'count', arguments: '{"word":"abcd"}' }])
    expect(h.session.events.find((e) => e.type === 'tool/result' && e['callId'] === 'direct')).toMatchObject({
      meta: { card: 'count', word: 'abcd', n: 4 },
    })
  })

  test('a throwing dispatch-log listener is caught: the original content is logged', async () => {
    const runtime = new FakeRuntime()
    const h = ptcHarness(runtime)
    h.tools.on('tools/ptc-dispatch-log', () => {
      throw new Error('listener bug')
    })
    const result = await h.runCode(runtime.define('one', async (tools) => tools.lookup!({ key: 'abc' })))
    expect(result.isError).toBe(false)
    expect(h.session.events.find((e) => e.type === 'tool/ptc-dispatch')).toMatchObject({
      content: [{ type: 'text', text: 'abc=3' }],
    })
  })

  test('a pre-execute denial of a sub-call rejects that call in the program, which keeps running', async () => {
    const runtime = new FakeRuntime()
    const h = ptcHarness(runtime)
    h.tools.on('tools/pre-execute', (exec, next) =>
      exec.name === 'write' ? { kind: 'deny', reason: 'read-only session' } : next(),
    )
    const code = runtime.define('deny', async (tools, console) => {
      try {
        await tools.write!({ key: 'w' })
      } catch (error) {
        console.log(`caught: ${(error as Error).message}`)
      }
      return tools.lookup!({ key: 'ok' })
    })
    const result = await h.runCode(code)
    expect(text(result)).toContain('caught: read-only session')
    expect(text(result)).toContain('"key": "ok"')
    expect(h.trace).not.toContain('start write w')
  })

  test('a post-execute value replacement is what the program receives', async () => {
    const runtime = new FakeRuntime()
    const h = ptcHarness(runtime)
    h.tools.on('tools/post-execute', (exec, _result, next) =>
      exec.name === 'lookup' ? { kind: 'accept', value: { key: 'replaced', value: 7 } } : next(),
    )
    const result = await h.runCode(runtime.define('post', async (tools) => tools.lookup!({ key: 'a' })))
    expect(result.isError).toBe(false)
    expect(result.isError === false && result.value).toEqual({ logs: [], result: { key: 'replaced', value: 7 } })
  })

  test('an outer abort aborts in-flight sub-calls, abandons queued ones (no events) and fails the run as abort', async () => {
    const runtime = new FakeRuntime()
    const h = ptcHarness(runtime, { maxParallelSubCalls: 1 })
    const controller = new AbortController()
    const code = runtime.define('slow', async (tools) =>
      Promise.all([tools.lookup!({ key: 'a', delayMs: 5_000 }), tools.lookup!({ key: 'b' })]),
    )
    setTimeout(() => controller.abort(), 30)
    const result = await h.runCode(code, { signal: controller.signal })
    expect(result.isError).toBe(true)
    expect(text(result)).toMatch(/^Error: code run failed \(abort\)/)
    const ptc = h.session.events.filter((e) => e.type.startsWith('tool/ptc'))
    expect(ptc.map((e) => `${e.type} ${String(e.subCallId)}`)).toEqual([
      'tool/ptc-dispatch-start run1:ptc:1',
      'tool/ptc-dispatch run1:ptc:1',
    ])
    expect(h.trace).toEqual(['start a'])
  })

  test('a runtime failure after sub-calls started still drains and logs them', async () => {
    const runtime = new FakeRuntime()
    const h = ptcHarness(runtime)
    const code = runtime.define('crash', async (tools, console) => {
      void tools.lookup!({ key: 'slow', delayMs: 40 }).catch(() => undefined)
      console.log('about to fail')
      await sleep(5)
      return new FakeFailure('memory', 'out of memory')
    })
    const result = await h.runCode(code)
    expect(text(result)).toBe('Error: code run failed (memory): out of memory\nCaptured output:\nabout to fail')
    expect(h.session.events.filter((e) => e.type === 'tool/ptc-dispatch')).toHaveLength(1)
  })

  test('without an agent sub-calls run and nothing is logged', async () => {
    const runtime = new FakeRuntime()
    const h = ptcHarness(runtime)
    const code = runtime.define('noagent', async (tools) => tools.lookup!({ key: 'abc' }))
    const out = await h.tools.execute({
      calls: [{ type: 'tool_call', id: 'r', name: 'run_code', arguments: JSON.stringify({ code, description: 'd' }) }],
      signal: new AbortController().signal,
    })
    expect(out.results[0]!.result.isError).toBe(false)
    expect(h.session.events).toHaveLength(0)
  })

  test('a tool removed after the bindings were built rejects as unknown while the program keeps running', async () => {
    const runtime = new FakeRuntime()
    const trace: string[] = []
    const h = ptcHarness(runtime)
    const extra = h.tools.register({
      ...(await import('./testing/fixtures.js')).fixtureTools(trace)[0]!,
      name: 'extra',
    })
    const code = runtime.define('removed', async (tools, console) => {
      extra()
      await tools.extra!({ key: 'x' }).catch((e: Error) => console.log(e.message))
      return 'still running'
    })
    const result = await h.runCode(code)
    expect(text(result)).toMatch(/unknown tool: extra[\s\S]*still running/)
    expect(trace).toEqual([])
  })

  test('a same-name replacement or a new restriction after the bindings were built rejects that call as unknown', async () => {
    const runtime = new FakeRuntime()
    const h = ptcHarness(runtime)
    const agent = h.agent
    const code = runtime.define('stale', async (tools, console) => {
      // replace `lookup` with a same-name tool in the agent's scope, and restrict `write` away
      h.tools
        .scoped(agent)
        .register({ ...(await import('./testing/fixtures.js')).fixtureTools()[0]!, description: 'impostor' })
      h.tools.scoped(agent).restrict({ deny: ['write'] })
      for (const call of [() => tools.lookup!({ key: 'a' }), () => tools.write!({ key: 'w' })]) {
        await call().then(
          () => console.log('ran'),
          (e: Error) => console.log(e.message),
        )
      }
      return 'done'
    })
    const result = await h.runCode(code)
    expect(text(result)).toBe(
      'unknown tool: lookup (it was removed, replaced or restricted after the program started)\n' +
        'unknown tool: write (it was removed, replaced or restricted after the program started)\ndone',
    )
    expect(h.trace).toEqual([])
    expect(h.session.events.filter((e) => e.type.startsWith('tool/ptc'))).toEqual([])
  })

  test('a conditional tool is bound only when the step admitted it', async () => {
    const runtime = new FakeRuntime()
    // Without discovery, whose search_tools every program has.
    const h = ptcHarness(runtime, { discovery: false })
    const { fixtureTools } = await import('./testing/fixtures.js')
    h.tools.register(
      { ...fixtureTools()[0]!, name: 'beta' },
      { when: ({ modelSelection }) => modelSelection.model === 'big' },
    )
    const code = runtime.define('names', async (tools) => Object.keys(tools).sort())
    const unadmitted = await h.runCode(code)
    expect(unadmitted.isError === false && unadmitted.value).toEqual({ logs: [], result: ['lookup', 'write'] })
    const toolSet = await h.tools.resolve({
      agent: h.agent,
      modelSelection: { provider: 'p', model: 'big' },
      signal: new AbortController().signal,
    })
    const out = await h.tools.execute({
      calls: [{ type: 'tool_call', id: 'r', name: 'run_code', arguments: JSON.stringify({ code, description: 'd' }) }],
      signal: new AbortController().signal,
      agent: h.agent,
      toolSet,
    })
    const admitted = out.results[0]!.result
    expect(admitted.isError === false && admitted.value).toEqual({ logs: [], result: ['beta', 'lookup', 'write'] })
  })

  test('presentCall for run_code is an execute card titled with the description, the code as input', () => {
    const h = ptcHarness(new FakeRuntime())
    // the transport is never registered; get() finds it through the scope's executor, as presenters need
    const definition = h.tools.get('run_code', h.agent)
    expect(definition?.name).toBe('run_code')
    expect(presentCall('run_code', { code: 'return 1', description: 'Sum the orders' }, definition)).toEqual({
      card: 'generic',
      kind: 'execute',
      title: 'Sum the orders',
      rawInput: 'return 1',
    })
    expect(presentCall('run_code', { code: 'return 1', description: '  ' }, definition)).toMatchObject({
      title: 'run_code',
    })
    expect(h.tools.definitions(h.agent).map((d) => d.name)).not.toContain('run_code')
  })

  test('sub-call contexts and images are deferred after the run_code result; a concluding sub-call concludes the batch', async () => {
    const runtime = new FakeRuntime()
    const h = ptcHarness(runtime)
    h.tools.register({
      name: 'snap',
      description: 'returns an image and concludes',
      parameters: { type: 'object', properties: {} },
      output: { schema: { type: 'string' }, render: () => [{ type: 'image', mimeType: 'image/png', data: 'AAAA' }] },
      execute: async (_args, ctx) => {
        ctx.deferContext({ role: 'user', content: [{ type: 'text', text: 'note from snap' }] })
        ctx.concludeTurn()
        return 'ok'
      },
    })
    const code = runtime.define('snap', async (tools) => tools.snap!({}))
    const out = await h.batch([
      { type: 'tool_call', id: 'r', name: 'run_code', arguments: JSON.stringify({ code, description: 'd' }) },
    ])
    expect(out.additionalContexts).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'note from snap' }] },
      { role: 'user', content: [{ type: 'image', mimeType: 'image/png', data: 'AAAA' }] },
    ])
    expect(out.concluded).toBe(true)
  })

  test('what the calls bring along is bounded (maxForwardedChars): each image or context whole or not at all, a note says what was left out', async () => {
    const runtime = new FakeRuntime()
    const h = ptcHarness(runtime, { maxForwardedChars: 250 })
    const image = (n: number): ImageBlock => ({ type: 'image', mimeType: 'image/png', data: String(n).repeat(60) })
    h.tools.register({
      name: 'photo',
      description: 'returns an image (109 characters of it count: 60 of data, 9 of type, 40 of block)',
      parameters: { type: 'object', properties: { n: { type: 'integer' } } },
      output: { schema: { type: 'integer' }, render: (args) => [image((args as { n: number }).n)] },
      execute: async (args) => (args as { n: number }).n,
    })
    const code = runtime.define('photos', async (tools) => [
      await tools.photo!({ n: 1 }),
      await tools.photo!({ n: 2 }),
      await tools.photo!({ n: 3 }),
    ])
    const out = await h.batch([
      { type: 'tool_call', id: 'r', name: 'run_code', arguments: JSON.stringify({ code, description: 'd' }) },
    ])
    const result = out.results[0]!.result
    expect(result.isError === false && result.value).toEqual({ logs: [], result: [1, 2, 3] })
    expect(out.additionalContexts).toEqual([
      { role: 'user', content: [image(1)] },
      { role: 'user', content: [image(2)] },
      {
        role: 'user',
        content: [
          {
            type: 'text',
            text: "[ptc: 1 image that the program's tool calls returned was left out: they would have taken what a run_code result brings along past 250 characters (maxForwardedChars)]",
          },
        ],
      },
    ])
    expect(() => ptcHarness(runtime, { maxForwardedChars: -1 })).toThrow(
      'maxForwardedChars must be a non-negative integer, not -1',
    )
  })

  test('a deferred context too deeply nested to write as JSON is left out, said in the note; the program goes on', async () => {
    const runtime = new FakeRuntime()
    const h = ptcHarness(runtime)
    let meta: unknown = 'leaf'
    for (let i = 0; i < 100_000; i++) meta = { m: meta }
    h.tools.register({
      name: 'deep',
      description: 'defers a context with a deep meta',
      parameters: { type: 'object', properties: {} },
      output: { schema: { type: 'string' }, render: () => [{ type: 'text', text: 'ok' }] },
      execute: async (_args, ctx) => {
        ctx.deferContext({ role: 'user', content: [{ type: 'text', text: 'deep' }], meta: meta as JsonValue })
        return 'ok'
      },
    })
    const code = runtime.define('deep', async (tools) => [await tools.deep!({}), 'after'])
    const out = await h.batch([
      { type: 'tool_call', id: 'r', name: 'run_code', arguments: JSON.stringify({ code, description: 'd' }) },
    ])
    const result = out.results[0]!.result
    expect(result.isError === false && result.value).toEqual({ logs: [], result: ['ok', 'after'] })
    expect(out.additionalContexts).toEqual([
      { role: 'user', content: [{ type: 'text', text: expect.stringMatching(/^\[ptc: 1 message that /) }] },
    ])
  })

  test('an image counts its block too: empty images do not pass maxForwardedChars', async () => {
    const runtime = new FakeRuntime()
    const h = ptcHarness(runtime, { maxForwardedChars: 150 })
    h.tools.register({
      name: 'empties',
      description: 'returns ten empty images',
      parameters: { type: 'object', properties: {} },
      output: {
        schema: { type: 'string' },
        render: () => Array.from({ length: 10 }, () => ({ type: 'image' as const, mimeType: '', data: '' })),
      },
      execute: async () => 'ok',
    })
    const code = runtime.define('empties', async (tools) => tools.empties!({}))
    const out = await h.batch([
      { type: 'tool_call', id: 'r', name: 'run_code', arguments: JSON.stringify({ code, description: 'd' }) },
    ])
    // 40 characters a block: three fit in 150.
    expect(out.additionalContexts?.[0]?.content).toHaveLength(3)
    expect(out.additionalContexts?.[1]?.content).toEqual([
      { type: 'text', text: expect.stringMatching(/^\[ptc: 7 images that /) },
    ])
  })

  test("a long run's images and contexts go with the part returned after they came, not only with the first", async () => {
    const runtime = new FakeRuntime()
    const h = ptcHarness(runtime, { longRuns: { returnAfterMs: 20 } })
    let release = (): void => undefined
    const later = new Promise<void>((resolve) => (release = resolve))
    h.tools.register({
      name: 'photo',
      description: 'returns an image, and a note',
      parameters: { type: 'object', properties: { n: { type: 'integer' } } },
      output: {
        schema: { type: 'integer' },
        render: (args) => [{ type: 'image', mimeType: 'image/png', data: `P${(args as { n: number }).n}` }],
      },
      execute: async (args, ctx) => {
        ctx.deferContext({ role: 'user', content: [{ type: 'text', text: `note ${(args as { n: number }).n}` }] })
        return (args as { n: number }).n
      },
    })
    const code = runtime.define('two photos', async (tools) => {
      const first = await tools.photo!({ n: 1 })
      await later
      return [first, await tools.photo!({ n: 2 })]
    })
    const contextsOf = (n: number): unknown[] => [
      { role: 'user', content: [{ type: 'text', text: `note ${n}` }] },
      { role: 'user', content: [{ type: 'image', mimeType: 'image/png', data: `P${n}` }] },
    ]
    const first = await h.batch([
      { type: 'tool_call', id: 'r', name: 'run_code', arguments: JSON.stringify({ code, description: 'd' }) },
    ])
    const handle = (first.results[0]!.result as { value?: { running?: string } }).value?.running
    expect(handle).toBe('run-1')
    release()
    const last = await h.batch([
      { type: 'tool_call', id: 'w', name: 'run_code', arguments: JSON.stringify({ wait: handle, description: 'w' }) },
    ])
    expect((last.results[0]!.result as { value?: unknown }).value).toEqual({ logs: [], result: [1, 2] })
    // The first photo's go with the first part when it came within returnAfterMs (else with the last); the second's with the last.
    expect([...(first.additionalContexts ?? []), ...(last.additionalContexts ?? [])]).toEqual([
      ...contextsOf(1),
      ...contextsOf(2),
    ])
    expect(last.additionalContexts?.slice(-2)).toEqual(contextsOf(2))
  })
})
