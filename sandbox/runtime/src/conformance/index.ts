import { afterAll, beforeAll, describe } from 'vitest'
import type { CodeRuntime } from '../types.js'
import { callTests } from './calls.js'
import { makeContext, type ConformanceOptions } from './context.js'
import { lifecycleTests } from './lifecycle.js'
import { limitTests } from './limits.js'
import { sessionTests } from './sessions.js'
import { valueTests } from './values.js'

export type { ConformanceOptions } from './context.js'
export { seededRandom } from './random.js'

/**
 * The conformance suite every `CodeRuntime` backend runs. Call it at the top level
 * of a vitest file: `runtimeConformance('quickjs worker', () => createQuickJSRuntime())`. Tests a
 * backend cannot meet go in `options.skip` with a written reason, keyed by test name.
 */
export function runtimeConformance(
  label: string,
  create: () => CodeRuntime | Promise<CodeRuntime>,
  options: ConformanceOptions = {},
): void {
  describe(`runtime conformance: ${label}`, () => {
    let runtime: CodeRuntime | undefined
    beforeAll(async () => {
      runtime = await create()
    })
    afterAll(async () => {
      await runtime?.dispose()
    })
    const getRuntime = (): CodeRuntime => {
      if (runtime === undefined) throw new Error('runtime not created yet')
      return runtime
    }
    const s = makeContext(getRuntime, create, options)
    describe('values, errors and logs', () => valueTests(s))
    describe('sub-calls', () => callTests(s))
    describe('limits', () => limitTests(s))
    describe('lifecycle', () => lifecycleTests(s))
    if (options.sessions === true) describe('sandbox sessions', () => sessionTests(s))
  })
}
