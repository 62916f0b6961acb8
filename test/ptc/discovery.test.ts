/**
 * Tool discovery end to end on real isolates: past the budget the model input defers declarations, and
 * `search_tools` runs through the pipeline, model-direct and from programs, for the tools the agent may call.
 */
import type { CodeRuntime } from '@ptc/sandbox'
import { createPtcExecutor, sdkText, type PtcExecutorOptions } from '@ptc/ptc'
import { text } from '@ptc/ptc/testing'
import { createQuickJSRuntime } from '@ptc/sandbox-quickjs'
import {
  defineTool,
  MemorySession,
  ToolRegistrationError,
  ToolsService,
  type Agent,
  type ToolCallBlock,
  type ToolExecutionResult,
} from '@ptc/tools'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { backends } from './backends.js'

/** A tool of `namespace` that answers with its own name and the arguments it got. */
function tool(name: string, description: string, parameters: Parameters<typeof defineTool>[0]['parameters'] = {}) {
  return defineTool({
    name,
    description,
    parameters,
    output: {
      schema: {
        type: 'object',
        additionalProperties: false,
        properties: { tool: { type: 'string' }, args: { type: 'object', additionalProperties: true } },
      },
    },
    isConcurrencySafe: () => true,
    execute: (args) => Promise.resolve({ tool: name, args: args as never }),
  })
}

/** A catalog of 60 tools in three namespaces, whose declarations exceed the default budget. */
function catalog() {
  const list = [
    tool('issues.create', 'Open a new issue in a repository.', {
      repo: { type: 'string', required: true },
      title: { type: 'string', required: true },
      body: { type: 'string' },
    }),
    tool('issues.close', 'Close an issue.', {
      repo: { type: 'string', required: true },
      number: { type: 'integer', required: true },
    }),
    tool('repos.delete', 'Delete a repository permanently.', { repo: { type: 'string', required: true } }),
    tool('mail.send', 'Send an email message to a recipient.', {
      to: { type: 'string', required: true, description: 'recipient address' },
      subject: { type: 'string' },
    }),
  ]
  for (let i = 0; i < 56; i++) {
    const ns = ['issues', 'repos', 'mail'][i % 3] as string
    list.push(
      tool(
        `${ns}.op_${String(i).padStart(2, '0')}`,
        `Operation number ${i} of the ${ns} namespace, with a long enough description to weigh.`,
        { id: { type: 'string', required: true, description: 'the identifier of the thing to operate on' } },
      ),
    )
  }
  return list
}

function service(runtime: CodeRuntime, options: Omit<PtcExecutorOptions, 'runtime'> = {}) {
  const tools = new ToolsService()
  const disposers = catalog().map((t) => tools.register(t))
  tools.setExecutor(createPtcExecutor({ runtime, ...options }))
  const session = new MemorySession()
  const agent: Agent = { id: 'agent', session }
  let n = 0
  const call = async (name: string, args: unknown, who: Agent = agent): Promise<ToolExecutionResult> => {
    const block: ToolCallBlock = { type: 'tool_call', id: `c${++n}`, name, arguments: JSON.stringify(args) }
    const out = await tools.execute({
      calls: [block],
      signal: new AbortController().signal,
      agent: who,
      log: { turn: 1, step: n },
    })
    return (out.results[0] as { result: ToolExecutionResult }).result
  }
  return {
    tools,
    session,
    agent,
    disposers,
    call,
    run: (code: string, who?: Agent) => call('run_code', { code, description: 'test' }, who),
  }
}

describe('the model input past the discovery budget', () => {
  let runtime: CodeRuntime
  beforeAll(() => {
    runtime = createQuickJSRuntime({ isolation: 'inline' })
  })
  afterAll(() => runtime.dispose())

  test('at or under the budget the model input is byte-identical to the one without discovery', () => {
    const small = (discovery: PtcExecutorOptions['discovery']) => {
      const tools = new ToolsService()
      for (const t of catalog().slice(0, 3)) tools.register(t)
      tools.setExecutor(createPtcExecutor({ runtime, ...(discovery !== undefined && { discovery }) }))
      return JSON.stringify(tools.modelInput())
    }
    expect(small(undefined)).toBe(small(false))
    expect(small(undefined)).not.toContain('search_tools')
    expect(small({ budgetChars: 1_000_000 })).toBe(small(false))
  })

  test('past it the SDK section fits the budget, indexes the namespaces and offers search_tools', () => {
    const { tools } = service(runtime, { discovery: { budgetChars: 6_000 } })
    const input = tools.modelInput()
    expect(input.schemas.map((s) => s.name)).toEqual(['run_code', 'search_tools'])
    expect(input.knownNames).toEqual(['run_code', 'search_tools'])
    const sdk = input.sections.find((s) => s.name === 'ptc-sdk')?.text ?? ''
    expect(sdk.length).toBeLessThanOrEqual(6_000)
    expect(sdk).toContain('There are 60 tools; none is declared below.')
    expect(sdk).toMatch(/^- issues \(21 tools\): e\.g\. issues\.close, issues\.op_00/m)
    expect(sdk).toMatch(/^- mail \(19 tools\)/m)
    expect(sdk).toContain('search_tools(args: ToolArgsMap["search_tools"])')
    expect(sdk).not.toContain('"issues.create"(args')
  })

  test('always-loaded tools keep their declarations; in both mode they stay native tools', () => {
    const { tools } = service(runtime, { mode: 'both', discovery: { budgetChars: 7_000, alwaysLoaded: ['mail.send'] } })
    const input = tools.modelInput()
    expect(input.schemas.map((s) => s.name)).toEqual(['mail.send', 'run_code', 'search_tools'])
    expect(input.knownNames).toContain('issues.create')
    const sdk = input.sections.find((s) => s.name === 'ptc-sdk')?.text ?? ''
    expect(sdk).toContain('only 1 is declared below')
    expect(sdk).toContain('"mail.send"(args: ToolArgsMap["mail.send"])')
    expect(sdk.length).toBeLessThanOrEqual(7_000)
  })

  test('the text is the same bytes for the same catalog, run after run, and changes only with the catalog', () => {
    const a = service(runtime, { discovery: { budgetChars: 6_000 } })
    const b = service(runtime, { discovery: { budgetChars: 6_000 } })
    const first = JSON.stringify(a.tools.modelInput())
    expect(JSON.stringify(b.tools.modelInput())).toBe(first)
    expect(JSON.stringify(a.tools.modelInput())).toBe(first)
    // Re-registering the same catalog (a restart, an upstream's list_changed) keeps the bytes.
    for (const dispose of a.disposers) dispose()
    for (const t of catalog().reverse()) a.tools.register(t)
    expect(JSON.stringify(a.tools.modelInput())).toBe(first)
    a.tools.register(tool('mail.archive', 'Archive a message.'))
    const changed = JSON.stringify(a.tools.modelInput())
    expect(changed).not.toBe(first)
    expect(changed).toContain('mail (20 tools)')
  })

  test('sdkText renders what the executor gives with the same discovery option', () => {
    const { tools } = service(runtime, { discovery: { budgetChars: 6_000 } })
    const sdk = tools.modelInput().sections.find((s) => s.name === 'ptc-sdk')?.text
    expect(sdkText(tools.definitions(), { discovery: { budgetChars: 6_000 } })).toBe(sdk)
    expect(sdkText(tools.definitions())).toContain('"issues.create"(args')
  })

  test('search_tools is reserved while discovery is on, free with discovery: false', () => {
    const tools = new ToolsService()
    const dispose = tools.setExecutor(createPtcExecutor({ runtime }))
    expect(() => tools.register(tool('search_tools', 'mine'))).toThrow(ToolRegistrationError)
    expect(() => tools.register(tool('search_tools', 'mine'))).toThrow(/discovery: false/)
    dispose()
    const off = new ToolsService()
    off.setExecutor(createPtcExecutor({ runtime, discovery: false }))
    off.register(tool('search_tools', 'mine'))
    expect(() => off.setExecutor(createPtcExecutor({ runtime }))).toThrow(/"search_tools" is reserved/)
  })

  test('bad discovery options name what to change', () => {
    expect(() => createPtcExecutor({ runtime, discovery: { budgetChars: 0 } })).toThrow(
      /discovery.budgetChars must be a positive integer/,
    )
    expect(() => createPtcExecutor({ runtime, discovery: { alwaysLoaded: [''] } })).toThrow(
      /discovery.alwaysLoaded must be an array of tool names/,
    )
  })
})

describe('search_tools as a model-direct call', () => {
  let runtime: CodeRuntime
  beforeAll(() => {
    runtime = createQuickJSRuntime({ isolation: 'inline' })
  })
  afterAll(() => runtime.dispose())

  test('returns matches with the declaration the bindings render, logged like any call', async () => {
    const s = service(runtime)
    const result = await s.call('search_tools', { query: 'send an email', limit: 3 })
    expect(result.isError).toBe(false)
    const found = (result.value as { tools: { name: string; declaration: string }[] }).tools
    expect(found[0]?.name).toBe('mail.send')
    expect(found.length).toBeLessThanOrEqual(3)
    expect(found[0]?.declaration).toContain('interface Tools {')
    expect(found[0]?.declaration).toContain(
      '"mail.send"(args: ToolArgsMap["mail.send"]): Promise<ToolOutputMap["mail.send"]>',
    )
    expect(text(result)).toContain('mail.send: Send an email message to a recipient.')
    const logged = s.session.events.filter((e) => e.type === 'tool/call' || e.type === 'tool/result')
    expect(logged.map((e) => e.type)).toEqual(['tool/call', 'tool/result'])
  })

  test('an exact name ranks first; bad arguments are INVALID_ARGS with what to change', async () => {
    const s = service(runtime)
    const exact = await s.call('search_tools', { query: 'repos.delete' })
    expect((exact.value as { tools: { name: string }[] }).tools[0]?.name).toBe('repos.delete')
    for (const [args, message] of [
      [{ query: '  ' }, /query must be a non-empty string/],
      [{ query: 'x', limit: 0 }, /limit must be an integer from 1 to 50/],
      [{ query: 'x'.repeat(1_001) }, /give at most 1000/],
    ] as const) {
      const bad = await s.call('search_tools', args)
      expect(bad.isError).toBe(true)
      expect(bad.error?.info?.code).toBe('INVALID_ARGS')
      expect(text(bad)).toMatch(message)
    }
  })

  test('a policy may refuse a search, and guards apply', async () => {
    const s = service(runtime)
    const off = s.tools.on('tools/pre-execute', (exec, next) =>
      exec.name === 'search_tools' ? { kind: 'deny', reason: 'no searching' } : next(),
    )
    const denied = await s.call('search_tools', { query: 'issue' })
    expect(denied.error?.info?.code).toBe('DENIED')
    off()
    s.tools.guard((exec) => (exec.name === 'search_tools' ? 'guarded' : undefined))
    const guarded = await s.call('search_tools', { query: 'issue' })
    expect(guarded.error?.info?.code).toBe('DENIED')
    expect(text(guarded)).toContain('guarded')
  })
})

for (const backend of backends) {
  describe.skipIf(backend.skip !== undefined)(
    `search_tools from programs on ${backend.label}${backend.skip === undefined ? '' : ` (skipped: ${backend.skip})`}`,
    () => {
      let runtime: CodeRuntime
      beforeAll(() => {
        runtime = backend.create()
      })
      afterAll(() => runtime.dispose())

      test('a program searches, then calls what it found; each search is a parented sub-dispatch', async () => {
        const s = service(runtime)
        const result = await s.run(`
        const { tools: found } = await tools.search_tools({ query: 'open a new issue', limit: 2 })
        const made = await tools[found[0].name]({ repo: 'ptc', title: 'hello' })
        const mail = (await tools.search_tools({ query: 'email' })).tools[0]
        const sent = await tools[mail.name]({ to: 'a@b.c' })
        return [found[0].name, made.tool, sent.tool]
      `)
        expect(text(result)).toBe('[\n  "issues.create",\n  "issues.create",\n  "mail.send"\n]')
        const dispatches = s.session.events.filter((e) => e.type === 'tool/ptc-dispatch')
        expect(dispatches.map((e) => (e as unknown as { name: string }).name)).toEqual([
          'search_tools',
          'issues.create',
          'search_tools',
          'mail.send',
        ])
        expect(dispatches.every((e) => (e as unknown as { parentCallId: string }).parentCallId === 'c1')).toBe(true)
      })

      test('search returns only the tools the agent may call, and follows registrations as they change', async () => {
        const s = service(runtime)
        const restricted: Agent = { id: 'restricted', session: new MemorySession() }
        s.tools.scoped(restricted).restrict({ deny: ['repos.delete'] })
        const names = async (query: string, who?: Agent) => {
          const r = await s.run(
            `return (await tools.search_tools({ query: ${JSON.stringify(query)}, limit: 50 })).tools.map((t) => t.name)`,
            who,
          )
          expect(r.isError).toBe(false)
          return JSON.parse(text(r)) as string[]
        }
        expect(await names('delete a repository')).toContain('repos.delete')
        expect(await names('delete a repository', restricted)).not.toContain('repos.delete')
        expect(await names('refund a payment')).not.toContain('payments.refund')
        const off = s.tools.register(tool('payments.refund', 'Refund a payment to the customer.'))
        expect((await names('refund a payment'))[0]).toBe('payments.refund')
        off()
        expect(await names('refund a payment')).not.toContain('payments.refund')
        s.tools.register(tool('payments.refund', 'Give money back for a returned order.'))
        expect((await names('money back returned order'))[0]).toBe('payments.refund')
      })

      test('a refused search is a ToolCallError the program can catch, with its code', async () => {
        const s = service(runtime)
        s.tools.on('tools/pre-execute', (exec, next) =>
          exec.name === 'search_tools' ? { kind: 'deny', reason: 'searching is off' } : next(),
        )
        const result = await s.run(`
        try { await tools.search_tools({ query: 'issue' }); return 'searched' }
        catch (e) { return e.code + ': ' + e.message }
      `)
        expect(text(result)).toMatch(/^DENIED: .*searching is off/)
      })
    },
  )
}
