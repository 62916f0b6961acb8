import { describe, expect, test } from 'vitest'
import { ToolTimeoutError } from '../errors.js'
import { ToolsService } from '../registry/service.js'
import { defineTool } from '../schema/define-tool.js'
import type { ToolExecutionResult } from '../types/tool.js'
import type { ToolExecutor } from '../types/executor.js'
import { agent, call, codeOf, runBatch, runOne, textOf, tool } from './fixtures/tool.js'

/** Values a hostile or careless callback may throw, with the message each must produce. */
function hostileThrows(): [label: string, make: () => unknown, message: RegExp][] {
  const revocable = Proxy.revocable({}, {})
  revocable.revoke()
  return [
    ['an Error', () => new Error('boom'), /^Error: .*boom$/],
    ['a string', () => 'x', /^Error: .*x$/],
    ['undefined', () => undefined, /^Error: .*undefined was thrown$/],
    ['null', () => null, /^Error: .*null$/],
    [
      'an object whose toString throws',
      () => ({
        toString(): string {
          throw new Error('no string for you')
        },
      }),
      /^Error: .*cannot be described$/,
    ],
    [
      'an object whose coercion throws',
      () => ({
        [Symbol.toPrimitive](): string {
          throw new Error('no primitive')
        },
      }),
      /^Error: .*cannot be described$/,
    ],
    [
      'an Error whose message getter throws',
      () =>
        Object.defineProperty(new Error(), 'message', {
          get(): string {
            throw new Error('nope')
          },
        }),
      /^Error: .*cannot be described$/,
    ],
    ['a revoked Proxy', () => revocable.proxy, /^Error: .*cannot be described$/],
    // A message is no place for data: its head is kept, with the length it had.
    [
      'an Error with a 1 MB message',
      () => new Error('m'.repeat(1_000_000)),
      /^Error: [^m]*m{65536}… \(cut from 1000000 characters\)$/,
    ],
  ]
}

/** Every place a callback can throw during one call of tool `t`. */
const stages: [stage: string, install: (tools: ToolsService, thrown: () => unknown) => void][] = [
  [
    'the tool body',
    (tools, thrown) =>
      tools.register(
        tool('t', {
          execute: () => {
            throw thrown()
          },
        }),
      ),
  ],
  ['an async tool body', (tools, thrown) => tools.register(tool('t', { execute: () => Promise.reject(thrown()) }))],
  [
    'a tools/pre-execute listener',
    (tools, thrown) => {
      tools.register(tool('t'))
      tools.on('tools/pre-execute', () => {
        throw thrown()
      })
    },
  ],
  [
    'a tools/execute wrapper',
    (tools, thrown) => {
      tools.register(tool('t'))
      tools.on('tools/execute', async (_exec, next) => {
        await next()
        throw thrown()
      })
    },
  ],
  [
    'a tools/post-execute listener',
    (tools, thrown) => {
      tools.register(tool('t'))
      tools.on('tools/post-execute', () => {
        throw thrown()
      })
    },
  ],
  [
    'the renderer',
    (tools, thrown) =>
      tools.register(
        tool('t', {
          output: {
            schema: {},
            render: () => {
              throw thrown()
            },
          },
        }),
      ),
  ],
  [
    'presentationMeta',
    (tools, thrown) =>
      tools.register(
        tool('t', {
          output: {
            schema: {},
            render: () => [],
            presentationMeta: () => {
              throw thrown()
            },
          },
        }),
      ),
  ],
  [
    'projectContent',
    (tools, thrown) =>
      tools.register(
        tool('t', {
          projectContent: () => {
            throw thrown()
          },
        }),
      ),
  ],
  [
    'finalizeContent',
    (tools, thrown) =>
      tools.register(
        tool('t', {
          finalizeContent: () => {
            throw thrown()
          },
        }),
      ),
  ],
]

function expectStructuredFailure(result: ToolExecutionResult, text: RegExp): void {
  expect(result.isError).toBe(true)
  if (!result.isError) return
  expect(textOf(result)).toMatch(text)
  expect(result.content).toEqual([{ type: 'text', text: `Error: ${result.error.message}` }])
  expect(result.error.info).toEqual({ name: expect.any(String), code: expect.any(String) })
  expect(result.value).toBeUndefined()
}

describe('failures become isError results, and execute() never rejects', () => {
  for (const [stage, install] of stages) {
    describe(stage, () => {
      test.each(hostileThrows())('throwing %s', async (_label, make, message) => {
        const tools = new ToolsService()
        install(tools, make)
        const result = await runOne(tools, 't', {}, { agent: agent('a') })
        expectStructuredFailure(result, message)
        expect(codeOf(result)).toBe('TOOL_ERROR')
        expect(result.isError && result.error.info?.name).toBe('ToolExecutionError')
      })
    })
  }

  test('a thrown body keeps the batch going: later calls still run', async () => {
    const tools = new ToolsService()
    tools.register(tool('bad', { execute: () => Promise.reject(new Error('boom')) }))
    tools.register(tool('good'))
    const batch = await runBatch(tools, [call('bad'), call('good', { n: 1 })])
    expect(batch.results.map((r) => r.result.isError)).toEqual([true, false])
    expect(textOf(batch.results[0]?.result ?? { content: [] })).toBe('Error: boom')
  })

  test('a tools/ptc-dispatch-log listener that throws a revoked Proxy is caught: the original content is logged', async () => {
    const tools = new ToolsService()
    const revocable = Proxy.revocable({}, {})
    revocable.revoke()
    tools.on('tools/ptc-dispatch-log', () => {
      throw revocable.proxy
    })
    let logged: unknown
    const probe: ToolExecutor = {
      describe: () => ({ schemas: [], knownNames: [] }),
      async execute(input, host) {
        const exec = {
          callId: 'c',
          rootCallId: 'c',
          name: 'run_code',
          arguments: null,
          signal: input.signal,
          token: Symbol('c'),
        } as never
        logged = await host.ptcDispatchLog({
          exec,
          subCallId: 'c:ptc:0',
          name: 't',
          isError: false,
          content: [{ type: 'text', text: 'original' }],
        })
        return { results: [], additionalContexts: [], concluded: false }
      },
    }
    tools.setExecutor(probe)
    await runBatch(tools, [])
    expect(logged).toEqual([{ type: 'text', text: 'original' }])
  })

  test('a post-execute listener returning a revoked Proxy as its decision is an error result', async () => {
    const tools = new ToolsService()
    tools.register(tool('t'))
    const revocable = Proxy.revocable({}, {})
    revocable.revoke()
    tools.on('tools/post-execute', () => revocable.proxy as never)
    expectStructuredFailure(await runOne(tools, 't'), /^Error: .+/)
  })

  test('a post-execute decision whose getters throw is an error result', async () => {
    const tools = new ToolsService()
    let finalized = 0
    tools.register(
      tool('t', {
        finalizeContent: () => {
          finalized++
          return undefined
        },
      }),
    )
    const decision = {
      get kind(): string {
        throw new Error('hostile kind')
      },
    }
    tools.on('tools/post-execute', () => decision as never)
    expectStructuredFailure(await runOne(tools, 't'), /hostile kind/)
    expect(finalized).toBe(1)
  })

  test('a content callback whose getter throws when the call starts is an error result, not a rejection', async () => {
    const tools = new ToolsService()
    const definition = tool('t')
    tools.register(definition)
    let ran = 0
    definition.execute = () => Promise.resolve(ran++)
    Object.defineProperty(definition, 'finalizeContent', {
      get(): never {
        throw new Error('hostile callback')
      },
    })
    expectStructuredFailure(await runOne(tools, 't'), /the tool definition could not be read: hostile callback/)
    expect(ran).toBe(0)
  })

  test('a pre-execute listener returning something that is not a decision is an error result', async () => {
    const tools = new ToolsService()
    let ran = 0
    tools.register(
      tool('t', {
        execute: () => {
          ran++
          return Promise.resolve(null)
        },
      }),
    )
    tools.on('tools/pre-execute', () => ({ kind: 'maybe' }) as never)
    expectStructuredFailure(await runOne(tools, 't'), /not a decision/)
    expect(ran).toBe(0)
  })

  test('a malformed ask decision is an error result, not a rejection', async () => {
    const tools = new ToolsService({ approval: { request: () => Promise.resolve('allowed-once') } })
    tools.register(tool('t'))
    const reason = {
      toString(): string {
        throw new Error('no')
      },
    }
    tools.on('tools/pre-execute', () => ({ kind: 'ask', reason }) as never)
    const result = await runOne(tools, 't', {}, { agent: agent('a') })
    expectStructuredFailure(result, /ask decision/)
  })

  test('a deny decision with malformed info is an error result', async () => {
    const tools = new ToolsService()
    tools.register(tool('t'))
    tools.on('tools/pre-execute', () => ({ kind: 'deny', reason: 'no', info: 'nope' }) as never)
    expectStructuredFailure(await runOne(tools, 't'), /info/)
  })

  test('a body that throws a ptc error keeps its code and name', async () => {
    const tools = new ToolsService()
    tools.register(tool('t', { execute: () => Promise.reject(new ToolTimeoutError(5)) }))
    const result = await runOne(tools, 't')
    expect(result.isError && result.error).toEqual({
      message: 'tool call timed out after 5 ms',
      info: { name: 'ToolTimeoutError', code: 'TOOL_TIMEOUT' },
    })
  })
})

describe('unknown tools', () => {
  test('an unknown name is UNKNOWN_TOOL with no phase run', async () => {
    const tools = new ToolsService()
    let listeners = 0
    tools.on('tools/pre-execute', (_e, next) => {
      listeners++
      return next()
    })
    const result = await runOne(tools, 'nope')
    expectStructuredFailure(result, /^Error: unknown tool: nope$/)
    expect(result.isError && result.error.info).toEqual({ name: 'ToolNotFoundError', code: 'UNKNOWN_TOOL' })
    expect(listeners).toBe(0)
  })
})

describe('invalid arguments', () => {
  function typedTool(onRun: () => void): ReturnType<typeof defineTool> {
    return defineTool({
      name: 'typed',
      description: 'typed tool',
      parameters: {
        path: { type: 'string', required: true },
        count: { type: 'integer' },
        tags: { type: 'array', items: { type: 'string' } },
      },
      output: { schema: { type: 'string' }, render: (_args, value) => [{ type: 'text', text: value }] },
      execute: async (args) => {
        onRun()
        return args.path
      },
    })
  }

  test('arguments that do not match a defineTool schema are INVALID_ARGS with every path, and the body does not run', async () => {
    const tools = new ToolsService()
    let ran = 0
    tools.register(typedTool(() => ran++))
    const result = await runOne(tools, 'typed', { count: 1.5, tags: ['a', 2] })
    expectStructuredFailure(result, /invalid arguments/)
    expect(codeOf(result)).toBe('INVALID_ARGS')
    expect(result.isError && result.error.info?.name).toBe('ToolArgsError')
    const text = textOf(result)
    expect(text).toMatch(/path/)
    expect(text).toMatch(/\/count/)
    expect(text).toMatch(/\/tags\/1/)
    expect(ran).toBe(0)
  })

  test('valid defineTool arguments run the body with the validated arguments', async () => {
    const tools = new ToolsService()
    let ran = 0
    tools.register(typedTool(() => ran++))
    const result = await runOne(tools, 'typed', { path: 'a.txt' })
    expect(result).toMatchObject({ isError: false, value: 'a.txt', content: [{ type: 'text', text: 'a.txt' }] })
    expect(ran).toBe(1)
  })

  test.each([
    ['text that is not JSON', '{"path": '],
    ['an integer above 2^53', '{"path": "a", "count": 9007199254740993}'],
    ['duplicate keys', '{"path": "a", "path": "b"}'],
    ['a JSON value with trailing garbage', '{"path": "a"} x'],
  ])('raw argument %s is INVALID_ARGS through the native executor, and nothing runs', async (_label, raw) => {
    const tools = new ToolsService()
    let ran = 0
    let listeners = 0
    let finalized = 0
    tools.register(
      tool('raw', {
        execute: () => {
          ran++
          return Promise.resolve(null)
        },
        finalizeContent: () => {
          finalized++
          return undefined
        },
      }),
    )
    tools.on('tools/pre-execute', (_e, next) => {
      listeners++
      return next()
    })
    const result = await runOne(tools, 'raw', { raw })
    expectStructuredFailure(result, /^Error: arguments are not valid JSON/)
    expect(codeOf(result)).toBe('INVALID_ARGS')
    expect([ran, listeners, finalized]).toEqual([0, 0, 1])
  })

  test('empty argument text means an empty object', async () => {
    const tools = new ToolsService()
    tools.register(tool('t'))
    const result = await runOne(tools, 't', { raw: '' })
    expect(result).toMatchObject({ isError: false, value: {} })
  })
})

describe('invalid output', () => {
  test('a value outside the output schema is INVALID_TOOL_OUTPUT, seen by post-execute', async () => {
    const tools = new ToolsService()
    tools.register(
      tool('t', { output: { schema: { type: 'string' }, render: () => [] }, execute: () => Promise.resolve(42) }),
    )
    const seen: ToolExecutionResult[] = []
    tools.on('tools/post-execute', (_exec, result, next) => {
      seen.push(result)
      return next()
    })
    const result = await runOne(tools, 't')
    expect(codeOf(result)).toBe('INVALID_TOOL_OUTPUT')
    expect(result.isError && result.error.info?.name).toBe('ToolOutputError')
    expect(seen).toHaveLength(1)
    expect(seen[0]?.isError && seen[0].error.info?.code).toBe('INVALID_TOOL_OUTPUT')
  })

  test('a value that is not lossless JSON is INVALID_TOOL_OUTPUT and the renderer never sees it', async () => {
    const tools = new ToolsService()
    let rendered = 0
    tools.register(
      tool('t', {
        output: {
          schema: {},
          render: () => {
            rendered++
            return []
          },
        },
        execute: () => Promise.resolve({ when: new Date(0) }),
      }),
    )
    expect(codeOf(await runOne(tools, 't'))).toBe('INVALID_TOOL_OUTPUT')
    expect(rendered).toBe(0)
  })

  test('a defineTool body returning the wrong type is INVALID_TOOL_OUTPUT', async () => {
    const tools = new ToolsService()
    tools.register(
      defineTool({
        name: 'typed',
        description: 'd',
        parameters: { x: { type: 'string' } },
        output: { schema: { type: 'string' }, render: (_a, v) => [{ type: 'text', text: v }] },
        // The body breaks its own contract at run time (the type system cannot see it).
        execute: async (args) => (args.x === undefined ? 1.5 : 2) as unknown as string,
      }),
    )
    expect(codeOf(await runOne(tools, 'typed'))).toBe('INVALID_TOOL_OUTPUT')
  })

  test('renderer output that is not valid content is an error result', async () => {
    const tools = new ToolsService()
    tools.register(tool('t', { output: { schema: {}, render: () => [{ type: 'audio' }] as never } }))
    const result = await runOne(tools, 't')
    expect(result.isError).toBe(true)
    expect(textOf(result)).toMatch(/^Error: .*content/)
  })
})

describe('values too long to take', () => {
  /** An array nesting `[a, a]` `levels` times: 2^levels copies of its leaf as text, levels + 1 arrays in memory. */
  const doubling = (levels: number): unknown => {
    let value: unknown = ['leaf']
    for (let i = 0; i < levels; i++) value = [value, value]
    return value
  }

  /** A tool whose body returns `make()`, or hands it to a wrapper or post-execute listener; counts its renders. */
  function harness(
    where: 'body' | 'wrapper' | 'post-execute',
    make: () => unknown,
  ): { tools: ToolsService; renders: () => number } {
    let renders = 0
    const tools = new ToolsService()
    const render = (_args: unknown, value: unknown): [{ type: 'text'; text: string }] => {
      renders++
      return [{ type: 'text', text: JSON.stringify(value).slice(0, 100) }]
    }
    tools.register(
      tool('t', {
        output: { schema: {}, render },
        execute: () => Promise.resolve(where === 'body' ? make() : 'small'),
      }),
    )
    if (where === 'wrapper')
      tools.on('tools/execute', async () => ({ isError: false, value: make() as never, content: [] }))
    if (where === 'post-execute') tools.on('tools/post-execute', () => ({ kind: 'accept', value: make() as never }))
    return { tools, renders: () => renders }
  }

  for (const where of ['body', 'wrapper', 'post-execute'] as const) {
    test(`a ${where} value whose text would be 2^40 copies fails INVALID_TOOL_OUTPUT before it is rendered; the host lives`, async () => {
      const h = harness(where, () => doubling(40))
      const result = await runOne(h.tools, 't')
      expect(codeOf(result)).toBe('INVALID_TOOL_OUTPUT')
      expect(textOf(result)).toMatch(
        /too long to take: its JSON text is at least \d+ characters, more than the 268435456 this accepts$/,
      )
      // The long value is never rendered (a post-execute listener replaced a body's value that was).
      expect(h.renders()).toBe(where === 'post-execute' ? 1 : 0)
    })
  }

  test('a caller bound (maxValueChars) refuses a value at one character past it, and takes one that fits', async () => {
    const tools = new ToolsService()
    tools.register(tool('t', { execute: (args) => Promise.resolve('x'.repeat((args as { n: number }).n)) }))
    const bounded: ToolExecutor = {
      describe: () => ({ schemas: [], knownNames: [] }),
      execute: (input, services) =>
        Promise.all(
          input.calls.map(async (c) => ({
            callId: c.id,
            result: await services.dispatch(
              { callId: c.id, name: c.name, arguments: JSON.parse(c.arguments) as never, signal: input.signal },
              { maxValueChars: 12 },
            ),
          })),
        ).then((results) => ({ results, additionalContexts: [], concluded: false })),
    }
    tools.setExecutor(bounded)
    expect(await runOne(tools, 't', { n: 10 })).toMatchObject({ isError: false, value: 'x'.repeat(10) })
    const refused = await runOne(tools, 't', { n: 11 })
    expect(codeOf(refused)).toBe('INVALID_TOOL_OUTPUT')
    expect(textOf(refused)).toBe(
      'Error: tool t returned a value too long to take: its JSON text is at least 13 characters, more than the 12 this accepts',
    )
  })
})
