import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, test } from 'vitest'
import { CliError } from '../errors.js'
import { configChoosesIsolatedVm, findConfigFile, loadConfig, splitConfigOption } from './load.js'

const dir = mkdtempSync(join(tmpdir(), 'ptc-config-unit-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

describe('splitConfigOption', () => {
  test('takes --config FILE and --config=FILE off the arguments, the last one winning', () => {
    expect(splitConfigOption(['--upstream', 'x', '--config', 'a.ts', '--http', '0'])).toEqual({
      config: 'a.ts',
      rest: ['--upstream', 'x', '--http', '0'],
    })
    expect(splitConfigOption(['--config=a.ts', '--config=b.mjs'])).toEqual({ config: 'b.mjs', rest: [] })
    expect(splitConfigOption(['--', '--config', 'a.ts'])).toEqual({
      config: undefined,
      rest: ['--', '--config', 'a.ts'],
    })
  })

  test('a --config without a file is a usage error', () => {
    expect(() => splitConfigOption(['--config'])).toThrow('--config needs a file name: --config FILE')
    expect(() => splitConfigOption(['--config', '--http'])).toThrow(/needs a file name/)
    expect(() => splitConfigOption(['--config='])).toThrow(/needs a file name/)
  })
})

describe('findConfigFile', () => {
  test('finds the one config of a folder, or none; --config is taken as given', () => {
    expect(findConfigFile(undefined, dir)).toBeUndefined()
    writeFileSync(join(dir, 'ptc.config.mjs'), "export default { sandbox: 'isolated-vm' }")
    expect(findConfigFile(undefined, dir)).toEqual({ shown: 'ptc.config.mjs', path: join(dir, 'ptc.config.mjs') })
    expect(findConfigFile('other.ts', dir)).toEqual({ shown: 'other.ts', path: join(dir, 'other.ts') })
    expect(configChoosesIsolatedVm(undefined, dir)).toBe(true)
    expect(configChoosesIsolatedVm('other.ts', dir)).toBe(false)
  })

  test('two config files in one folder are an error naming both', () => {
    writeFileSync(join(dir, 'ptc.config.ts'), 'export default {}')
    expect(() => findConfigFile(undefined, dir)).toThrow(
      `2 config files in ${dir}: ptc.config.ts and ptc.config.mjs; keep one, or choose one with --config FILE`,
    )
    expect(configChoosesIsolatedVm(undefined, dir)).toBe(false)
  })
})

describe('loadConfig', () => {
  const loadError = async (name: string, source: string): Promise<unknown> => {
    const path = join(mkdtempSync(join(dir, 'throws-')), name)
    writeFileSync(path, source)
    return await loadConfig({ shown: name, path }).then(
      () => undefined,
      (thrown: unknown) => thrown,
    )
  }

  test('a config that throws a revoked proxy fails to load with a CONFIG CliError, not a TypeError', async () => {
    const error = await loadError(
      'ptc.config.mjs',
      'const { proxy, revoke } = Proxy.revocable({}, {})\nrevoke()\nthrow proxy\n',
    )
    expect(error instanceof CliError).toBe(true)
    expect(error).toMatchObject({ code: 'CONFIG', message: 'config file ptc.config.mjs failed to load: unknown error' })
  })

  test('a .ts config that throws an error whose code getter throws fails to load with a CONFIG CliError', async () => {
    const error = await loadError(
      'ptc.config.ts',
      "throw Object.defineProperty(new Error('boom'), 'code', { get() { throw new Error('getter') } })\n",
    )
    expect(error instanceof CliError).toBe(true)
    expect(error).toMatchObject({ code: 'CONFIG', message: 'config file ptc.config.ts failed to load: boom' })
  })
})
