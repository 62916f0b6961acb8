import { createHash, randomBytes, timingSafeEqual } from 'node:crypto'

/** A new bearer token: 256 random bits, base64url (43 characters). */
export function generateToken(): string {
  return randomBytes(32).toString('base64url')
}

/** Whether `token` can be a bearer token here: at least 16 visible ASCII characters, no spaces. */
export function isBearerToken(token: string): boolean {
  return /^[\x21-\x7e]{16,}$/.test(token)
}

/**
 * A check of `Authorization: Bearer <token>` headers. Both sides are hashed
 * to SHA-256 first, so `timingSafeEqual` always compares two 32-byte buffers
 * and the time taken says nothing about the token, not even its length.
 */
export function bearerCheck(token: string): (header: string | undefined) => boolean {
  const expected = digest(token)
  return (header) => {
    const match = header === undefined ? null : /^Bearer +([\x21-\x7e]+) *$/i.exec(header)
    const given = match?.[1]
    return given !== undefined && timingSafeEqual(digest(given), expected)
  }
}

function digest(text: string): Buffer {
  return createHash('sha256').update(text, 'utf8').digest()
}
