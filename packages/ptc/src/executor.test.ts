import { describe, expect, test } from 'vitest'
import { createPtcExecutor, sdkText } from './executor.js'
import { SDK_GUIDANCE } from './guidance.js'
import { FakeRuntime } from './testing/fake-runtime.js'
import { fixtureTools, ptcHarness } from './testing/fixtures.js'

describe('the SDK prompt section', () => {
  test("the executor's sections carry the SDK guidance that every step's SDK text starts with", () => {
    const executor = createPtcExecutor({ runtime: new FakeRuntime() })
    expect(executor.sections).toEqual([{ name: 'ptc-sdk', text: SDK_GUIDANCE }])
    expect(Object.isFrozen(executor.sections)).toBe(true)
    const tools = fixtureTools()
    const described = executor.describe(tools).sections ?? []
    expect(described).toEqual([{ name: 'ptc-sdk', text: sdkText(tools) }])
    expect(described[0]?.text.startsWith(`${executor.sections?.[0]?.text ?? '(none)'}\n\n\`\`\`ts\n`)).toBe(true)
  })

  test.each(['code', 'both'] as const)(
    'in %s mode modelInput() has the SDK text once, as `ptc sdk` prints it',
    (mode) => {
      const h = ptcHarness(new FakeRuntime(), { mode })
      expect(h.tools.modelInput(h.agent).sections).toEqual([{ name: 'ptc-sdk', text: sdkText(h.tools.definitions()) }])
    },
  )
})

describe("run_code's timeoutMs ceiling", () => {
  test("is the runtime's own wall when the executor sets none, and the executor's when it does", async () => {
    const runCode = async (h: ReturnType<typeof ptcHarness>, timeoutMs: number): Promise<string> => {
      const out = await h.batch([
        {
          type: 'tool_call',
          id: 'r',
          name: 'run_code',
          arguments: JSON.stringify({ code: 'x', description: 'd', timeoutMs }),
        },
      ])
      const result = out.results[0]?.result
      return result?.isError === true ? `${result.error.info?.code ?? ''} ${JSON.stringify(result.content)}` : 'ran'
    }
    const runtime = new FakeRuntime({ wallMs: 5_000 })
    expect(await runCode(ptcHarness(runtime), 10_000)).toMatch(/^INVALID_ARGS .*timeoutMs must be at most 5000 ms/)
    expect(await runCode(ptcHarness(runtime, { limits: { wallMs: 20_000 } }), 10_000)).not.toMatch(/INVALID_ARGS/)
    expect(await runCode(ptcHarness(runtime, { limits: { wallMs: 20_000 } }), 30_000)).toMatch(
      /timeoutMs must be at most 20000 ms/,
    )
  })
})
