import { readFile } from 'node:fs/promises'
import { basename, extname, resolve } from 'node:path'
import { CliError, firstLine } from './errors.js'
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

const DESCRIPTION = /^\s*\/\/\s*@description\s+(.+?)\s*$/

/** Reads `path` (or all of stdin for `-`); a missing or unreadable file is a `CliError('INPUT')`. */
export async function readProgram(path: string, io: CliIo): Promise<ProgramFile> {
  let code: string
  if (path === '-') {
    code = await readAll(io.stdin)
  } else {
    try {
      code = await readFile(resolve(io.cwd, path), 'utf8')
    } catch (error) {
      const reason = (error as { code?: unknown }).code === 'ENOENT' ? 'no such file' : firstLine(error)
      throw new CliError('INPUT', `cannot read program ${path}: ${reason}`, { cause: error })
    }
  }
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
    const match = DESCRIPTION.exec(line)
    if (match?.[1] !== undefined) return match[1]
    if (!trimmed.startsWith('//') && !trimmed.startsWith('/*')) return undefined
  }
  return undefined
}

async function readAll(stream: NodeJS.ReadableStream): Promise<string> {
  const chunks: Buffer[] = []
  for await (const chunk of stream) chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk)
  return Buffer.concat(chunks).toString('utf8')
}
