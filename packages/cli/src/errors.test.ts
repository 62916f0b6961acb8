import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import * as errors from './errors.js'
import { CliError } from './errors.js'
import { loadToolSet } from './tools-module.js'

const brand = Symbol.for('@ptc/cli.error')

/** A second copy of this module (another URL, so another module instance): a bundled and a source build side by side. */
async function secondCopy(): Promise<typeof errors> {
  return (await import(/* @vite-ignore */ new URL('./errors.ts?copy', import.meta.url).href)) as typeof errors
}

/** Values whose every trap throws: a hostile Proxy and a revoked one. */
function hostileValues(): unknown[] {
  const boom = (): never => {
    throw new Error('trap')
  }
  const traps = { get: boom, has: boom, getPrototypeOf: boom, getOwnPropertyDescriptor: boom, ownKeys: boom }
  const revocable = Proxy.revocable(new CliError('USAGE', 'x'), {})
  revocable.revoke()
  return [new Proxy({}, traps), new Proxy(new CliError('CONFIG', 'x'), traps), revocable.proxy]
}

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

  it('instanceof CliError holds across two copies of the module; a subclass checks the prototype', async () => {
    const copy = await secondCopy()
    expect(copy.CliError).not.toBe(CliError)
    expect(new copy.CliError('CONFIG', 'x') instanceof CliError).toBe(true)
    expect(new CliError('CONFIG', 'x') instanceof copy.CliError).toBe(true)
    expect(new MissingInputError('a.js') instanceof copy.CliError).toBe(true)
    expect(new copy.CliError('INPUT', 'x') instanceof MissingInputError).toBe(false)
  })

  it('the base check is the brand: an object carrying it is an instance, one without it is not', () => {
    expect(Object.create(null, { [brand]: { value: true } }) instanceof CliError).toBe(true)
    expect(Object.create(null, { [brand]: { value: true } }) instanceof MissingInputError).toBe(false)
    expect(Object.create(null, { [Symbol.for('@ptc/tools.error')]: { value: true } }) instanceof CliError).toBe(false)
    expect(Object.assign(new Error('x'), { name: 'CliError', code: 'USAGE', exitCode: 2 }) instanceof CliError).toBe(false)
  })

  it('never throws: hostile and revoked proxies are not instances', () => {
    for (const value of hostileValues()) {
      expect(() => value instanceof CliError).not.toThrow()
      expect(value instanceof CliError).toBe(false)
      expect(value instanceof MissingInputError).toBe(false)
    }
  })

  it('plain objects, null and primitives are not instances', () => {
    for (const value of [{}, { code: 'USAGE', exitCode: 2 }, [], null, undefined, 0, 'CliError', true, Symbol('x'), 1n, () => undefined, new Error('x')]) {
      expect(value instanceof CliError).toBe(false)
      expect(value instanceof MissingInputError).toBe(false)
    }
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
})
