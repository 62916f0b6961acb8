import { expect, test } from 'vitest'
import { SDK_GUIDANCE } from './guidance.js'

test('the SDK text tells the model what the sandbox lacks, which models write by habit', () => {
  for (const missing of ['`import`', '`require`', '`setTimeout`', '`fetch`', '`process`'])
    expect(SDK_GUIDANCE).toContain(missing)
  expect(SDK_GUIDANCE).toMatch(/only the ECMAScript built-ins and `tools`/)
})
