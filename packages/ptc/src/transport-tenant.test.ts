import { expect, test } from 'vitest'
import { FakeRuntime } from './testing/fake-runtime.js'
import { ptcHarness } from './testing/fixtures.js'

test("run_code runs the program as its agent's tenant: one agent's flood does not queue another's", async () => {
  const runtime = new FakeRuntime()
  runtime.define('return 1', async () => 1)
  const h = ptcHarness(runtime)
  expect((await h.runCode('return 1')).isError).toBe(false)
  expect(runtime.requests.map((r) => r.tenant)).toEqual([h.agent.id])
})
