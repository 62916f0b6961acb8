import { join } from 'node:path'
import { describe, expect, test } from 'vitest'
import { runCommand } from '../commands/run.js'
import { memoryIo } from '../fixtures/io.js'
import { nativeComparison } from './report.js'

const ROOT = join(import.meta.dirname, '../../../..')

describe('the demo (pnpm demo: ptc run of a shop program on the built-in tools)', () => {
  test('shows the program it ran and what native tool calling would have sent the model', async () => {
    const { io, stdout, stderr } = memoryIo(ROOT)
    expect(await runCommand(['examples/shop/programs/top-customers.ts', '--approve', 'no'], io)).toBe(0)
    const err = stderr()
    expect(err).toMatch(
      /^ptc: the program examples\/shop\/programs\/top-customers\.ts, as a model writes it for run_code:\n {2}\| \/\/ @description Top 3 customers/,
    )
    expect(err).toContain('  | const orders = await tools.list_orders(')
    expect(err).not.toContain('eslint-disable')
    const comparison =
      /ptc: native tool calling would have sent 7 calls and (\d+) bytes of tool results to the model; PTC sent 1 call \(run_code\) and (\d+) bytes\n/.exec(
        err,
      )
    expect(comparison).not.toBeNull()
    expect(Number(comparison?.[2])).toBe(Buffer.byteLength(stdout().replace(/\n$/, ''), 'utf8'))
    expect(Number(comparison?.[1])).toBeGreaterThan(Number(comparison?.[2]))
  }, 30_000)

  test('the comparison is said only when tools were called', async () => {
    expect(nativeComparison(0, { inSandbox: 0, toModel: 12 })).toBeUndefined()
    expect(nativeComparison(1, { inSandbox: 40, toModel: 12 })).toBe(
      'native tool calling would have sent 1 call and 40 bytes of tool results to the model; PTC sent 1 call (run_code) and 12 bytes',
    )
  })
})
