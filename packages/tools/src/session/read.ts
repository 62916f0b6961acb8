import { readFile } from 'node:fs/promises'
import { resolve } from 'node:path'
import { describeThrown } from '../errors.js'
import type { SessionEvent } from '../types/scope.js'
import { eventShapeProblem } from './event.js'
import { SessionError } from '../errors.js'

/** An unterminated last line (a crash mid-write); it is never trusted, even if it parses. */
export interface JsonlPartialTail {
  /** Byte offset where the partial line starts. */
  readonly offset: number
  /** Its length in bytes. */
  readonly bytes: number
}

/** A complete line that is not a session event (a hand edit, a foreign writer); it is skipped. */
export interface JsonlInvalidLine {
  /** 1-based line number. */
  readonly line: number
  /** Byte offset where the line starts. */
  readonly offset: number
  readonly message: string
}

/** What `readJsonlSession` found. */
export interface JsonlReadResult {
  /** Every complete, valid event, in file order. */
  readonly events: SessionEvent[]
  /** The ignored partial last line, or `undefined` if the file ends with `\n` (or is empty). */
  readonly partialTail: JsonlPartialTail | undefined
  /** Complete lines that were skipped; empty for a file written only by `JsonlSession`. */
  readonly invalidLines: readonly JsonlInvalidLine[]
}

/**
 * Reads a session file written by `JsonlSession` (for `ptc log`). Only lines
 * terminated by `\n` count: a partial trailing line is reported in
 * `partialTail` and ignored; blank lines are skipped; other bad lines are
 * reported in `invalidLines`. Never modifies the file. A missing or unreadable
 * file is a `SessionError('SESSION_OPEN_FAILED')`.
 */
export async function readJsonlSession(path: string): Promise<JsonlReadResult> {
  const absolute = resolve(path)
  let data: Buffer
  try {
    data = await readFile(absolute)
  } catch (error) {
    const message = `cannot read session file ${absolute}: ${describeThrown(error)}`
    throw new SessionError('SESSION_OPEN_FAILED', message, { cause: error })
  }
  return parseJsonl(data)
}

/** Splits and parses JSON Lines bytes; see `readJsonlSession`. */
export function parseJsonl(data: Uint8Array): JsonlReadResult {
  const bytes = Buffer.from(data.buffer, data.byteOffset, data.byteLength)
  const events: SessionEvent[] = []
  const invalidLines: JsonlInvalidLine[] = []
  let start = 0
  let line = 0
  while (start < bytes.length) {
    const end = bytes.indexOf(0x0a, start)
    if (end === -1) return { events, partialTail: { offset: start, bytes: bytes.length - start }, invalidLines }
    line++
    const text = bytes.toString('utf8', start, end)
    if (text.trim() !== '') {
      let value: unknown
      let problem: string | undefined
      try {
        value = JSON.parse(text)
        problem = eventShapeProblem(value)
      } catch (error) {
        problem = `not JSON: ${describeThrown(error)}`
      }
      if (problem === undefined) events.push(value as SessionEvent)
      else invalidLines.push({ line, offset: start, message: problem })
    }
    start = end + 1
  }
  return { events, partialTail: undefined, invalidLines }
}
