/**
 * A suspended program's token: the key its state is stored (and sealed) under, which `ToolsService.resume` is
 * given back; and how messages quote a token a caller gave, which may be anything.
 */
import { randomUUID } from 'node:crypto'
import { cut } from '../messages.js'

/** A fresh token. */
export function newToken(): string {
  return `ptc-run-${randomUUID()}`
}

/** A token as messages quote it: at most 100 characters of it, as JSON (a caller's token may be anything). */
export function shownToken(token: string): string {
  return JSON.stringify(cut(token, 100))
}
