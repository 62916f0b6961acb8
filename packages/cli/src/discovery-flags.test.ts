import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, test } from 'vitest'
import { parseCommandArgs } from './args.js'
import { runCommand } from './commands/run.js'
import { sdkCommand } from './commands/sdk.js'
import { DISCOVERY_OPTIONS, discoveryFlags, discoveryOption } from './discovery-flags.js'
import { CliError } from './errors.js'
import { memoryIo } from './fixtures/io.js'
import { main } from './main.js'

const dir = mkdtempSync(join(tmpdir(), 'ptc-discovery-flags-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

const flags = (args: readonly string[]): ReturnType<typeof discoveryFlags> =>
  discoveryFlags(parseCommandArgs('run', args, DISCOVERY_OPTIONS).values)

function usage(args: readonly string[]): string {
  try {
    flags(args)
  } catch (error) {
    if (error instanceof CliError && error.code === 'USAGE') return error.message
    throw error
  }
  throw new Error('no usage error')
}

describe('the discovery flags', () => {
  test('parse: a budget, repeated --always-load, --no-discovery; none given says nothing', () => {
    expect(flags([])).toEqual({ off: false })
    expect(flags(['--discovery-budget', '2000', '--always-load', 'get_order', '--always-load', 'list_orders'])).toEqual(
      {
        off: false,
        budgetChars: 2000,
        alwaysLoaded: ['get_order', 'list_orders'],
      },
    )
    expect(flags(['--no-discovery'])).toEqual({ off: true })
  })

  test('a bad value is a usage error naming the flag', () => {
    expect(usage(['--discovery-budget', 'lots'])).toBe(
      '--discovery-budget must be a positive whole number of characters, not "lots"',
    )
    expect(usage(['--discovery-budget', '0'])).toBe(
      '--discovery-budget must be a positive whole number of characters, not "0"',
    )
    expect(usage(['--always-load', ''])).toBe('--always-load needs a tool name, not ""')
    expect(usage(['--no-discovery', '--discovery-budget', '100'])).toBe(
      '--no-discovery turns discovery off; --discovery-budget goes with it on: give one or the other',
    )
    expect(usage(['--no-discovery', '--always-load', 'x'])).toBe(
      '--no-discovery turns discovery off; --always-load goes with it on: give one or the other',
    )
  })

  test("the flags win over the config's discovery; neither says: the executor's default", () => {
    expect(discoveryOption(undefined, { off: false })).toBeUndefined()
    expect(discoveryOption(false, { off: false })).toBe(false)
    expect(discoveryOption({ budgetChars: 100 }, { off: false })).toEqual({ budgetChars: 100 })
    expect(discoveryOption({ budgetChars: 100, alwaysLoaded: ['a'] }, { off: false, budgetChars: 500 })).toEqual({
      budgetChars: 500,
      alwaysLoaded: ['a'],
    })
    expect(discoveryOption({ budgetChars: 100, alwaysLoaded: ['a'] }, { off: false, alwaysLoaded: ['b'] })).toEqual({
      budgetChars: 100,
      alwaysLoaded: ['b'],
    })
    expect(discoveryOption(false, { off: false, budgetChars: 500 })).toEqual({ budgetChars: 500 })
    expect(discoveryOption({ budgetChars: 100 }, { off: true })).toBe(false)
  })

  test('ptc run, ptc resume and ptc sdk show them in --help', async () => {
    for (const command of ['run', 'resume', 'sdk']) {
      const { io, stdout } = memoryIo(dir)
      expect(await main([command, '--help'], io)).toBe(0)
      for (const flag of ['--discovery-budget CHARS', '--always-load NAME', '--no-discovery'])
        expect(stdout(), `${command} ${flag}`).toContain(flag)
    }
  })
})

describe('ptc sdk', () => {
  test('past --discovery-budget: the always-loaded declarations, the index and search_tools; --no-discovery: every declaration', async () => {
    const full = memoryIo(dir)
    expect(await sdkCommand(['--no-discovery'], full.io)).toBe(0)
    expect(full.stdout()).toContain('list_orders')
    const deferred = memoryIo(dir)
    expect(await sdkCommand(['--discovery-budget', '1000', '--always-load', 'get_order'], deferred.io)).toBe(0)
    expect(deferred.stdout()).toContain('search_tools')
    expect(deferred.stdout().length).toBeLessThan(full.stdout().length)
  })

  test("the config's discovery applies, and a flag wins over it", async () => {
    writeFileSync(join(dir, 'ptc.config.mjs'), 'export default { discovery: { budgetChars: 1000 } }\n')
    try {
      const configured = memoryIo(dir)
      expect(await sdkCommand([], configured.io)).toBe(0)
      expect(configured.stdout()).toContain('search_tools')
      const off = memoryIo(dir)
      expect(await sdkCommand(['--no-discovery'], off.io)).toBe(0)
      expect(off.stdout()).not.toContain('search_tools')
    } finally {
      rmSync(join(dir, 'ptc.config.mjs'))
    }
  })

  test('--always-load of a tool that is not there is a usage error naming the flag and the closest tool', async () => {
    const { io } = memoryIo(dir)
    await expect(sdkCommand(['--always-load', 'get_ordr'], io)).rejects.toThrow(
      '--always-load names "get_ordr", which is not a tool (did you mean "get_order"?)',
    )
  })
})

describe('ptc run', () => {
  test('the executor gets the discovery asked for: search_tools is there when it is on, a refused call when it is off', async () => {
    writeFileSync(
      join(dir, 'search.js'),
      "const found = await tools.search_tools({ query: 'refund an order' })\nreturn found.tools.map((t) => t.name)\n",
    )
    const on = memoryIo(dir)
    expect(await runCommand(['search.js', '--json', '--discovery-budget', '500'], on.io)).toBe(0)
    expect((JSON.parse(on.stdout()) as { value: string[] }).value).toContain('issue_refund')
    const off = memoryIo(dir)
    expect(await runCommand(['search.js', '--json', '--no-discovery'], off.io)).toBe(1)
    expect((JSON.parse(off.stdout()) as { error: { message: string } }).error.message).toMatch(/search_tools/)
  }, 30_000)
})
