import { wrapSessionProgram } from './session-program.js'
import { mapStrippedColumn, stripTypeScript, type StripResult } from './strip.js'
import type { CodeRunError } from './types.js'

/** The file name the guest engine is given for the program; positions in it are mapped back. */
export const PROGRAM_FILENAME = 'ptc-program.js'
/** Lines the wrapper adds before the model's first line. */
export const PROGRAM_LINE_OFFSET = 1

/** A program ready to evaluate: `source` evaluates to an async function taking no arguments. */
export interface PreparedProgram {
  /**
   * `(async function () {\n<body>\n})` (a session program: `wrapSessionSource(body)`, made when first
   * read): evaluate it as a script named `PROGRAM_FILENAME`.
   */
  readonly source: string
  /** The program's JavaScript (stripped of TypeScript), for a backend that wraps it elsewhere (`session`). */
  readonly body: string
  /** A session program: its source is `wrapSessionSource(body)`, which a backend may make on its engine's thread. */
  readonly session: boolean
  /** Maps a 1-based position in `source` to a 1-based position in the model's code. */
  mapPosition(line: number, column: number): { line: number; column: number }
}

/** The prelude's globals, which a session program's declarations never replace. */
const SESSION_RESERVED: readonly string[] = ['tools', 'console', 'ToolCallError']

/**
 * The source of a session program: its top-level declarations become globals (`wrapSessionProgram`);
 * a body acorn cannot parse is wrapped as usual, and the engine reports its syntax error. Parsing costs
 * about 0.3-0.5 s per MiB of program here: a backend with an engine thread does it there.
 */
export function wrapSessionSource(body: string): string {
  return wrapSessionProgram(body, { reserved: SESSION_RESERVED }) ?? wrapProgram(body)
}

/** Wraps a program body (already JavaScript) in the async function the guest calls. */
export function wrapProgram(body: string): string {
  return `(async function () {\n${body}\n})`
}

/**
 * Strips TypeScript (unless `language` is `'javascript'`) on this thread and wraps the body. A
 * TypeScript syntax error is a `syntax` failure with the model's line and column.
 */
export function prepareProgram(
  code: string,
  language: 'typescript' | 'javascript' = 'typescript',
): { ok: true; program: PreparedProgram } | { ok: false; error: CodeRunError } {
  return programFromStripped(code, language === 'typescript' ? stripTypeScript(code) : { ok: true, code })
}

/**
 * The program for `code` once stripped (`stripped.code === code` for JavaScript), or its syntax failure.
 * `sessionSource`: a session program's `wrapSessionSource(stripped.code)`, made already (off this thread).
 */
export function programFromStripped(
  code: string,
  stripped: StripResult,
  options?: { session?: boolean; sessionSource?: string },
): { ok: true; program: PreparedProgram } | { ok: false; error: CodeRunError } {
  if (!stripped.ok) {
    return {
      ok: false,
      error: {
        kind: 'syntax',
        message: `SyntaxError: ${stripped.message} (line ${stripped.line}, column ${stripped.column})`,
      },
    }
  }
  const body = stripped.code
  const lineCount = countLines(code)
  const strippedFrom = body === code ? undefined : { original: code, stripped: body }
  let originalLines: string[] | undefined
  let strippedLines: string[] | undefined
  const session = options?.session === true
  let source = session ? options?.sessionSource : undefined
  const program: PreparedProgram = {
    get source(): string {
      source ??= session ? wrapSessionSource(body) : wrapProgram(body)
      return source
    },
    body,
    session,
    mapPosition(line, column) {
      let l = line - PROGRAM_LINE_OFFSET
      let c = column
      if (l < 1) {
        l = 1
        c = 1
      } else if (l > lineCount) {
        l = lineCount
        c = 1
      } else if (strippedFrom !== undefined) {
        originalLines ??= strippedFrom.original.split('\n')
        strippedLines ??= strippedFrom.stripped.split('\n')
        c = mapStrippedColumn(originalLines[l - 1] ?? '', strippedLines[l - 1] ?? '', c)
      }
      return { line: l, column: c }
    },
  }
  return { ok: true, program }
}

function countLines(text: string): number {
  let n = 1
  for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1)) n++
  return n
}

/** What the guest prelude reports about a thrown value (all strings, made inside the guest). */
export interface GuestErrorInfo {
  /** Absent when the thrown value was not an error object. */
  name?: string
  message: string
  stack?: string
  /**
   * The characters the guest cut from the end of `message` (a message past twice the run's `maxOutputBytes`,
   * of which no more could be shown): they never left the guest.
   */
  cutChars?: number
}

const POSITION = /ptc-program\.js:(\d+):(\d+)/

/** `info.cutChars` when it is a count (the info comes from the guest), else 0. */
export function cutCharsOf(info: GuestErrorInfo): number {
  const { cutChars } = info
  return typeof cutChars === 'number' && Number.isSafeInteger(cutChars) && cutChars > 0 ? cutChars : 0
}

/** The first program position in a text (a stack), mapped to the model's code. */
export function findProgramPosition(
  text: string | undefined,
  program: PreparedProgram,
): { line: number; column: number } | undefined {
  if (text === undefined) return undefined
  const m = POSITION.exec(text)
  if (m === null) return undefined
  return program.mapPosition(Number(m[1]), Number(m[2]))
}

/**
 * The message of an `exception` or `syntax` failure: `Name: message (line L, column C)` with the
 * position of the innermost frame in the model's code, when there is one.
 */
export function formatGuestError(info: GuestErrorInfo, program: PreparedProgram): string {
  const head =
    info.name === undefined
      ? `Uncaught ${info.message}`
      : info.name === ''
        ? info.message
        : `${info.name}: ${info.message}`
  const pos = findProgramPosition(info.stack, program) ?? findProgramPosition(info.message, program)
  const text = head.replace(new RegExp(POSITION.source, 'g'), (_m, l: string, c: string) => {
    const p = program.mapPosition(Number(l), Number(c))
    return `line ${p.line}, column ${p.column}`
  })
  return pos === undefined ? text : `${text} (line ${pos.line}, column ${pos.column})`
}
