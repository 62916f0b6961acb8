import { describe, expect, test } from 'vitest'
import { getStock, sampleTools } from '../_fixtures.js'
import { renderDeclarations, renderToolDeclaration } from '../render/declarations.js'
import { CheckError, checkProgram, checkProgramBounded, type ToolCatalog } from './index.js'

const sdk = renderDeclarations(sampleTools)
/** For checks that should finish: each starts a process, which a loaded machine makes slow. */
const unhurried = { timeoutMs: 120_000 } as const
const TEST_MS = 180_000

/**
 * Template-literal types that expand to 10 000 strings each, about 25 KB of them: `checkProgram` ran such a
 * program for about a minute at close to 3 GB on the caller's thread before this bound existed.
 */
function hostileProgram(kilobytes = 25): string {
  const lines = ['type D = "0" | "1" | "2" | "3" | "4" | "5" | "6" | "7" | "8" | "9"']
  for (let i = 0; lines.join('\n').length < kilobytes * 1024; i++) {
    lines.push(`type T${i} = \`\${D}\${D}\${D}\${D}${i}\`; const v${i}: T${i} = "0000${i}"`)
  }
  return lines.join('\n')
}

/** Counts the turns of the caller's event loop while `work` runs. */
async function loopTurnsDuring<T>(work: Promise<T>): Promise<{ turns: number; outcome: PromiseSettledResult<T> }> {
  let turns = 0
  const ticker = setInterval(() => turns++, 10)
  try {
    const [outcome] = await Promise.allSettled([work])
    return { turns, outcome: outcome as PromiseSettledResult<T> }
  } finally {
    clearInterval(ticker)
  }
}

const codeOf = (outcome: PromiseSettledResult<unknown>): unknown =>
  outcome.status === 'rejected' && outcome.reason instanceof CheckError ? outcome.reason.code : outcome
const messageOf = (outcome: PromiseSettledResult<unknown>): string =>
  outcome.status === 'rejected' && outcome.reason instanceof Error ? outcome.reason.message : ''

describe('checkProgramBounded', () => {
  test(
    'gives what checkProgram gives, against declarations and against a catalog',
    async () => {
      const code = 'const s = await tools.get_stock({ sku: 1 })\nawait tools.list_al()\nreturn s.count'
      expect(await checkProgramBounded(code, sdk, unhurried)).toEqual(checkProgram(code, sdk))
      const read: string[] = []
      const byName = new Map(sampleTools.map((t) => [t.name, t]))
      const catalog: ToolCatalog = {
        names: () => [...byName.keys()],
        tool: (name) => (read.push(name), byName.get(name)),
      }
      const result = await checkProgramBounded(code, { catalog }, { ...unhurried, language: 'typescript' })
      expect(result).toEqual(checkProgram(code, sdk))
      expect(read).toEqual(['get_stock', 'list_all'])
      const declarations: ToolCatalog = {
        names: () => [...byName.keys()],
        declaration: (name) => renderToolDeclaration(byName.get(name) ?? getStock),
      }
      expect(await checkProgramBounded(code, { catalog: declarations }, unhurried)).toEqual(checkProgram(code, sdk))
    },
    TEST_MS,
  )

  test(
    'types that expand without end are stopped at timeoutMs; the caller’s event loop runs meanwhile',
    async () => {
      const { turns, outcome } = await loopTurnsDuring(checkProgramBounded(hostileProgram(), sdk, { timeoutMs: 2_000 }))
      expect(codeOf(outcome)).toBe('CHECK_TIMEOUT')
      expect(messageOf(outcome)).toMatch(/longer than 2000 ms .*raise `timeoutMs`/)
      expect(turns).toBeGreaterThan(0)
    },
    TEST_MS,
  )

  test('types that need more heap than maxMemoryMb are stopped with CHECK_MEMORY; this process goes on', async () => {
    const check = checkProgramBounded(hostileProgram(), sdk, { maxMemoryMb: 256, timeoutMs: 600_000 })
    const { outcome } = await loopTurnsDuring(check)
    expect(codeOf(outcome)).toBe('CHECK_MEMORY')
    expect(messageOf(outcome)).toMatch(/more than 256 MB .*raise `maxMemoryMb`/)
    expect(await checkProgramBounded('return 1', sdk, unhurried)).toEqual({ ok: true, diagnostics: [] })
  }, 600_000)

  test(
    'a program nested too deeply for the checker is CHECK_STACK',
    async () => {
      const nested = checkProgramBounded(`return ${'('.repeat(100_000)}1${')'.repeat(100_000)}`, sdk, unhurried)
      await expect(nested).rejects.toMatchObject({ code: 'CHECK_STACK', cause: expect.any(RangeError) })
    },
    TEST_MS,
  )

  test('an abort signal stops the check with its reason; one aborted before starts nothing', async () => {
    const controller = new AbortController()
    const check = checkProgramBounded(hostileProgram(), sdk, { signal: controller.signal })
    controller.abort(new Error('no longer needed'))
    await expect(check).rejects.toThrow('no longer needed')
    await expect(checkProgramBounded('return 1', sdk, { signal: AbortSignal.abort('early') })).rejects.toBe('early')
  })

  test(
    'what the catalog throws rejects the check',
    async () => {
      const broken: ToolCatalog = {
        names: () => ['get_stock'],
        tool: () => {
          throw new TypeError('catalog down')
        },
      }
      const check = checkProgramBounded('await tools.get_stock({ sku: "a" })', { catalog: broken }, unhurried)
      await expect(check).rejects.toThrow('catalog down')
    },
    TEST_MS,
  )

  test('a bound that is not a whole number from 1 is a RangeError', () => {
    expect(() => checkProgramBounded('', sdk, { timeoutMs: 0 })).toThrow(RangeError)
    expect(() => checkProgramBounded('', sdk, { maxMemoryMb: 1.5 })).toThrow(/maxMemoryMb must be a whole number/)
    expect(() => checkProgramBounded('', sdk, { timeoutMs: 2 ** 31 })).toThrow(RangeError)
  })
})
