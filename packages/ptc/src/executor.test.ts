import { describe, expect, test } from 'vitest'
import { createPtcExecutor, SDK_GUIDANCE, sdkText } from './executor.js'
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

  test.each(['code', 'both'] as const)('in %s mode modelInput() has the SDK text once, as `ptc sdk` prints it', (mode) => {
    const h = ptcHarness(new FakeRuntime(), { mode })
    expect(h.tools.modelInput(h.agent).sections).toEqual([{ name: 'ptc-sdk', text: sdkText(h.tools.definitions()) }])
  })
})
