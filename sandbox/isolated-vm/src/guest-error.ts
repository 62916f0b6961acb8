import type { GuestErrorInfo } from '@ptc/sandbox/backend'

/** A readable message for anything thrown; total. (The engine child does not load `@ptc/sandbox`.) */
export function messageOf(error: unknown): string {
  try {
    if (error instanceof Error) return error.message
    return String(error)
  } catch {
    return 'unknown error'
  }
}

/**
 * isolated-vm reports a compile error as `SyntaxError: <message> [<file>:<line>:<column>]`: split
 * the position off the message into a stack-like line that `formatGuestError` maps to the model's code.
 */
export function syntaxErrorInfo(error: unknown, programFilename: string): GuestErrorInfo {
  const name = error instanceof Error && typeof error.name === 'string' ? error.name : 'SyntaxError'
  const raw = messageOf(error)
  const at = raw.lastIndexOf(` [${programFilename}:`)
  if (at === -1) return { name, message: raw }
  const position = raw.slice(at + 2, raw.endsWith(']') ? -1 : undefined)
  return { name, message: raw.slice(0, at), stack: `    at ${position}` }
}
