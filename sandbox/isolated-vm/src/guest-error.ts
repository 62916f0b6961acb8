import { messageOf, PROGRAM_FILENAME } from '@ptc/sandbox'
import type { GuestErrorInfo } from '@ptc/sandbox'

/**
 * isolated-vm reports a compile error as `SyntaxError: <message> [<file>:<line>:<column>]`: split
 * the position off the message into a stack-like line that `formatGuestError` maps to the model's code.
 */
export function syntaxErrorInfo(error: unknown): GuestErrorInfo {
  const name = error instanceof Error && typeof error.name === 'string' ? error.name : 'SyntaxError'
  const raw = messageOf(error)
  const at = raw.lastIndexOf(` [${PROGRAM_FILENAME}:`)
  if (at === -1) return { name, message: raw }
  const position = raw.slice(at + 2, raw.endsWith(']') ? -1 : undefined)
  return { name, message: raw.slice(0, at), stack: `    at ${position}` }
}
