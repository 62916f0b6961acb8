/**
 * `ptc check` against the configured tools as a catalog (any tool may be called, search_tools too), and its
 * bounds: a program whose types never finish expanding ends with exit 1 and the flag to raise. Runs the built
 * binary, so the checker's process starts from the built `@ptc/bindings`.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { buildCli } from './build.js'
import { noStack, ptc, tempDir } from './cli.js'

/** Template-literal types of 10 000 strings each, about 25 KB: minutes and gigabytes of checking. */
function hostileProgram(): string {
  const lines = ['type D = "0" | "1" | "2" | "3" | "4" | "5" | "6" | "7" | "8" | "9"']
  for (let i = 0; lines.join('\n').length < 25 * 1024; i++) {
    lines.push(`type T${i} = \`\${D}\${D}\${D}\${D}${i}\`; const v${i}: T${i} = "0000${i}"`)
  }
  return lines.join('\n')
}

const files = tempDir({
  'search.ts': [
    'const { tools: found } = await tools.search_tools({ query: "refund an order" })',
    'const order = await tools.get_order({ id: "O-1001" })',
    'return { names: found.map((t) => t.name), order }',
  ].join('\n'),
  'misspelt.ts': 'return await tools.get_ordr({ id: "O-1001" })\n',
  'hostile.ts': hostileProgram(),
})
afterAll(() => files.cleanup())
beforeAll(() => buildCli(), 120_000)
/** Each check starts the binary and then the checker's process: seconds each on a loaded machine. */
const CHECK_TEST_MS = 60_000

describe('ptc check against the tools as a catalog', () => {
  test(
    'a program may call search_tools and any tool',
    async () => {
      const run = await ptc(['check', 'search.ts'], { cwd: files.dir })
      expect(run).toMatchObject({ code: 0, stdout: 'search.ts: no type errors\n' })
    },
    CHECK_TEST_MS,
  )

  test(
    'a name that is no tool is an error with the closest name',
    async () => {
      const run = await ptc(['check', 'misspelt.ts'], { cwd: files.dir })
      expect(run.code).toBe(1)
      const message = "Property 'get_ordr' does not exist on type 'Tools'. Did you mean 'get_order'?"
      expect(run.stdout).toBe(`misspelt.ts:1:20 - error TS2551: ${message}\n`)
    },
    CHECK_TEST_MS,
  )
})

describe('ptc check is bounded', () => {
  test('past --check-timeout the checker is stopped: exit 1 naming the flag', async () => {
    const run = await ptc(['check', 'hostile.ts', '--check-timeout', '1500'], { cwd: files.dir, killAfterMs: 60_000 })
    expect(run.code).toBe(1)
    const reason = 'the type checker took longer than 1500 ms (raise --check-timeout)'
    expect(run.stderr).toBe(`ptc: cannot type-check hostile.ts: ${reason}\n`)
  }, 90_000)

  test('past --check-memory the checker is stopped: exit 1 naming the flag, no crash report', async () => {
    const args = ['check', 'hostile.ts', '--check-memory', '256', '--check-timeout', '300000']
    const run = await ptc(args, { cwd: files.dir, killAfterMs: 400_000 })
    expect(run.code).toBe(1)
    const reason = 'the type checker needed more than 256 MB of memory (raise --check-memory)'
    expect(run.stderr).toBe(`ptc: cannot type-check hostile.ts: ${reason}\n`)
    expect(noStack(run.stderr)).toBe(true)
  }, 420_000)

  test('a bound that is not a positive whole number is a usage error', async () => {
    const run = await ptc(['check', 'misspelt.ts', '--check-timeout', '0'], { cwd: files.dir })
    const stderr = 'ptc: --check-timeout must be a positive whole number of milliseconds, not "0"\n'
    expect(run).toMatchObject({ code: 2, stderr })
  })
})
