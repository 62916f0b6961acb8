import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { brandedErrorChecks } from '../../../test/support/branded-error.js'
import * as errors from './errors.js'
import { CliError } from './errors.js'
import { loadToolSet } from './tools-module.js'

/** A subclass, as a command might write one. */
class MissingInputError extends CliError {
  constructor(file: string) {
    super('INPUT', `${file} not found`)
  }
}

const dir = mkdtempSync(join(tmpdir(), 'ptc-cli-errors-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

describe('CliError', () => {
  it('has a stable code, the class name as name, exit status 2 and the message', () => {
    const e = new CliError('USAGE', 'unknown option --x')
    expect(e instanceof Error).toBe(true)
    expect([e.code, e.name, e.exitCode, e.message]).toEqual(['USAGE', 'CliError', 2, 'unknown option --x'])
    const sub = new MissingInputError('a.js')
    expect([sub.code, sub.name, sub.exitCode, sub.message]).toEqual(['INPUT', 'MissingInputError', 2, 'a.js not found'])
  })

  it('keeps the cause it wraps, and has none otherwise', () => {
    const cause = Object.assign(new Error('ENOENT'), { code: 'ENOENT' })
    expect(new CliError('INPUT', 'a.js not found', { cause }).cause).toBe(cause)
    expect('cause' in new CliError('INPUT', 'a.js not found')).toBe(false)
  })

  it('a tools module that throws a revoked proxy fails to load with a TOOLS_MODULE CliError (the check used to throw)', async () => {
    const file = join(dir, 'revoked.mjs')
    writeFileSync(file, 'const { proxy, revoke } = Proxy.revocable({}, {})\nrevoke()\nthrow proxy\n')
    const error: unknown = await loadToolSet(file, dir).then(
      () => undefined,
      (thrown: unknown) => thrown,
    )
    expect(error instanceof CliError).toBe(true)
    expect(error).toMatchObject({ code: 'TOOLS_MODULE', message: `tools module ${file} failed to load: unknown error` })
  })

  brandedErrorChecks({
    base: CliError,
    sub: MissingInputError,
    brand: '@ptc/cli.error',
    code: 'USAGE',
    make: () => new CliError('USAGE', 'x'),
    makeSub: () => new MissingInputError('program.ts'),
    secondCopy: async () => {
      const copy = (await import(/* @vite-ignore */ new URL('./errors.ts?copy', import.meta.url).href)) as typeof errors
      return { base: copy.CliError, instance: new copy.CliError('USAGE', 'x') }
    },
  })
})
