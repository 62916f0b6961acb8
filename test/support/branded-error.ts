/**
 * The checks every package's branded base error must pass (each package's `errors.test.ts` runs them):
 * `instanceof Base` holds across two copies of the module (a bundled and a source build side by side)
 * through a `Symbol.for` brand, a subclass keeps the ordinary prototype check, and the check never
 * throws, whatever the value (a hostile or revoked Proxy is simply not an instance).
 */
import { expect, it } from 'vitest'

type ErrorClass = abstract new (...args: never[]) => Error

export interface BrandedErrorCase {
  /** The package's base error class. */
  base: ErrorClass
  /** A subclass of it (one of the package's, or one written as a host would). */
  sub: ErrorClass
  /** The `Symbol.for` key of the brand. */
  brand: string
  /** A code of the package: an ordinary error that merely carries it is not an instance. */
  code: string
  /** A new instance of the base class, and one of the subclass. */
  make: () => Error
  makeSub: () => Error
  /** The same module loaded a second time (another URL): its base class and an instance made with it. */
  secondCopy: () => Promise<{ base: ErrorClass; instance: Error }>
}

/** A Proxy whose every trap throws, one over an instance, and a revoked one. */
function hostileValues(make: () => Error): unknown[] {
  const boom = (): never => {
    throw new Error('trap')
  }
  const traps = { get: boom, has: boom, getPrototypeOf: boom, getOwnPropertyDescriptor: boom, ownKeys: boom }
  const revocable = Proxy.revocable(make(), {})
  revocable.revoke()
  return [new Proxy({}, traps), new Proxy(make(), traps), revocable.proxy]
}

/** Registers the brand checks as tests of the current `describe`. */
export function brandedErrorChecks(c: BrandedErrorCase): void {
  const is = (value: unknown, cls: ErrorClass): boolean => value instanceof cls

  it(`instanceof ${c.base.name} holds across two copies of the module; a subclass checks the prototype`, async () => {
    const copy = await c.secondCopy()
    expect(copy.base).not.toBe(c.base)
    expect(is(copy.instance, c.base)).toBe(true)
    expect(is(c.make(), copy.base)).toBe(true)
    expect(is(c.makeSub(), copy.base)).toBe(true)
    expect(is(copy.instance, c.sub)).toBe(false)
    expect(is(c.makeSub(), c.sub)).toBe(true)
  })

  it('the base check is the brand: an object carrying it is an instance, one without it is not', () => {
    const carrying = (key: string): unknown => Object.create(null, { [Symbol.for(key)]: { value: true } })
    expect(is(carrying(c.brand), c.base)).toBe(true)
    expect(is(carrying(c.brand), c.sub)).toBe(false)
    expect(is(carrying(c.brand === '@ptc/tools.error' ? '@ptc/sandbox.error' : '@ptc/tools.error'), c.base)).toBe(false)
    expect(is(Object.assign(new Error('x'), { name: c.base.name, code: c.code }), c.base)).toBe(false)
  })

  it('never throws: hostile and revoked proxies are not instances', () => {
    for (const value of hostileValues(c.make)) {
      expect(() => is(value, c.base)).not.toThrow()
      expect(is(value, c.base)).toBe(false)
      expect(is(value, c.sub)).toBe(false)
    }
  })

  it('plain objects, null and primitives are not instances', () => {
    for (const value of [
      {},
      { code: c.code },
      [],
      null,
      undefined,
      0,
      'x',
      true,
      Symbol('x'),
      1n,
      () => undefined,
      new Error('x'),
    ]) {
      expect(is(value, c.base)).toBe(false)
      expect(is(value, c.sub)).toBe(false)
    }
  })
}
