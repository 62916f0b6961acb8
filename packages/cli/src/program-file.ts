import { basename, extname, resolve } from 'node:path'
import { DEFAULT_LIMITS } from '@ptc/sandbox'
import { CliError } from './errors.js'
import { readBoundedStream, readRegularFile } from './input-file.js'
import type { CliIo } from './io.js'

/** A program to run or check: the body of an async function, as a model sends it in `run_code`. */
export interface ProgramFile {
  /** The path as given, or `-` for standard input. */
  readonly path: string
  readonly code: string
  /** From a leading `// @description …` line, else the file's name. */
  readonly description: string
  readonly language: 'typescript' | 'javascript'
}

/** Linear: no lazy group before a trailing `\\s*$` (quadratic on a long line of blanks). */
const DESCRIPTION = /^\s*\/\/\s*@description\s(.*)/

/** The largest program read: the sandbox's default `maxProgramBytes` (1 MiB). */
export const MAX_PROGRAM_BYTES = DEFAULT_LIMITS.maxProgramBytes

/**
 * Reads `path` (or all of stdin for `-`), at most `MAX_PROGRAM_BYTES`. A
 * missing or unreadable file, one that is not a regular file (a directory, a
 * FIFO, a device) or one too large is a `CliError('INPUT')`.
 */
export async function readProgram(path: string, io: CliIo): Promise<ProgramFile> {
  const input = {
    what: 'program',
    shown: path === '-' ? '(stdin)' : path,
    maxBytes: MAX_PROGRAM_BYTES,
    code: 'INPUT',
  } as const
  const bytes =
    path === '-'
      ? await readBoundedStream(io.stdin, input)
      : await readRegularFile({
          ...input,
          path: resolve(io.cwd, path),
          streamHint: 'give - to read the program from standard input',
        })
  const code = bytes.toString('utf8')
  if (code.trim() === '') throw new CliError('INPUT', `program ${path === '-' ? '(stdin)' : path} is empty`)
  const ext = extname(path).toLowerCase()
  return {
    path,
    code,
    description: descriptionOf(code) ?? (path === '-' ? 'ptc run (stdin)' : `ptc run ${basename(path)}`),
    language: ext === '.js' || ext === '.mjs' || ext === '.cjs' ? 'javascript' : 'typescript',
  }
}

/** The `// @description …` among the program's leading comment lines. */
function descriptionOf(code: string): string | undefined {
  for (const line of code.split('\n')) {
    const trimmed = line.trim()
    if (trimmed === '') continue
    const description = DESCRIPTION.exec(line)?.[1]?.trim()
    if (description !== undefined && description !== '') return description
    if (!trimmed.startsWith('//') && !trimmed.startsWith('/*')) return undefined
  }
  return undefined
}
