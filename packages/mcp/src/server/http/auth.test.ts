import { describe, expect, test } from 'vitest'
import { bearerCheck, generateToken, isBearerToken } from './auth.js'

describe('bearer tokens', () => {
  test('generated tokens are 256 bits of base64url and acceptable tokens', () => {
    const token = generateToken()
    expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/)
    expect(Buffer.from(token, 'base64url')).toHaveLength(32)
    expect(isBearerToken(token)).toBe(true)
    expect(generateToken()).not.toBe(token)
    for (const bad of ['', 'short', 'sixteen chars ok', 'x'.repeat(15), `${'x'.repeat(20)}\n`, `${'é'.repeat(20)}`])
      expect(isBearerToken(bad), bad).toBe(false)
  })

  test('only "Bearer <the token>" passes (scheme in any case), whatever the length of a wrong one', () => {
    const check = bearerCheck('0123456789abcdef0123')
    expect(check('Bearer 0123456789abcdef0123')).toBe(true)
    expect(check('bearer 0123456789abcdef0123')).toBe(true)
    for (const wrong of [
      undefined,
      '',
      'Bearer',
      'Bearer ',
      '0123456789abcdef0123',
      'Basic 0123456789abcdef0123',
      'Bearer 0123456789abcdef012',
      'Bearer 0123456789abcdef01234',
      'Bearer 0123456789abcdef0123 x',
    ])
      expect(check(wrong), String(wrong)).toBe(false)
  })
})
