import { describe, expect, it } from 'vitest'
import { brandedErrorChecks } from '../../../test/support/branded-error.js'
import * as errors from './errors.js'
import { AdapterError, WireNameCollisionError } from './errors.js'

describe('AdapterError and its subclasses', () => {
  it('have a stable code and the class name as name', () => {
    const collision = new WireNameCollisionError('fs_read', 'fs.read', 'fs_read')
    expect([collision.code, collision.name, collision.wireName, collision.toolNames]).toEqual([
      'WIRE_NAME_COLLISION',
      'WireNameCollisionError',
      'fs_read',
      ['fs.read', 'fs_read'],
    ])
    expect(Object.isFrozen(collision.toolNames)).toBe(true)
  })

  brandedErrorChecks({
    base: AdapterError,
    sub: WireNameCollisionError,
    brand: '@ptc/adapters.error',
    code: 'WIRE_NAME_COLLISION',
    make: () => new AdapterError('WIRE_NAME_COLLISION', 'x'),
    makeSub: () => new WireNameCollisionError('a', 'a.b', 'a_b'),
    secondCopy: async () => {
      const copy = (await import(/* @vite-ignore */ new URL('./errors.ts?copy', import.meta.url).href)) as typeof errors
      return { base: copy.AdapterError, instance: new copy.AdapterError('WIRE_NAME_COLLISION', 'x') }
    },
  })
})
