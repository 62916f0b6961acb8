import { readFileSync } from 'node:fs'
import type * as TS from 'typescript'
import { _libDirectory } from './typescript.js'

/** Parsed `lib.*.d.ts` files, shared by every check in this process (they never change). */
const libFiles = new Map<string, TS.SourceFile | undefined>()
/** The last few parsed declaration texts: a session checks many programs against one SDK. */
const declarationFiles = new Map<string, TS.SourceFile>()
const MAX_DECLARATION_FILES = 8

/** Where the in-memory files live. Internal. */
export const _ROOT = '/__ptc__'
export const _SDK_FILE = `${_ROOT}/sdk.d.ts`

function declarationFile(ts: typeof TS, text: string, target: TS.ScriptTarget): TS.SourceFile {
  const cached = declarationFiles.get(text)
  if (cached !== undefined) {
    declarationFiles.delete(text)
    declarationFiles.set(text, cached)
    return cached
  }
  const file = ts.createSourceFile(_SDK_FILE, text, target, false, ts.ScriptKind.TS)
  declarationFiles.set(text, file)
  if (declarationFiles.size > MAX_DECLARATION_FILES) {
    const oldest = declarationFiles.keys().next()
    if (oldest.done !== true) declarationFiles.delete(oldest.value)
  }
  return file
}

function libFile(ts: typeof TS, path: string, target: TS.ScriptTarget): TS.SourceFile | undefined {
  if (libFiles.has(path)) return libFiles.get(path)
  let file: TS.SourceFile | undefined
  try {
    file = ts.createSourceFile(path, readFileSync(path, 'utf8'), target, false)
  } catch {
    file = undefined
  }
  libFiles.set(path, file)
  return file
}

/**
 * An in-memory compiler host: the program file (`parsed` when given) and the SDK declarations from memory, the
 * `lib.*.d.ts` files from the installed `typescript` package (parsed once per process), nothing
 * else (no `@types`, no `node_modules`). Internal.
 */
export function _createHost(
  ts: typeof TS,
  options: TS.CompilerOptions,
  program: { readonly fileName: string; readonly text: string; readonly parsed?: TS.SourceFile },
  declarations: string,
): TS.CompilerHost {
  const libDir = _libDirectory(ts)
  const target = options.target ?? ts.ScriptTarget.ES2022
  const memory = new Map([
    [program.fileName, program.text],
    [_SDK_FILE, declarations],
  ])
  return {
    getSourceFile(fileName) {
      if (fileName === _SDK_FILE) return declarationFile(ts, declarations, target)
      if (fileName === program.fileName && program.parsed !== undefined) return program.parsed
      const text = memory.get(fileName)
      if (text !== undefined) return ts.createSourceFile(fileName, text, target, false)
      if (fileName.startsWith(libDir)) return libFile(ts, fileName, target)
      return undefined
    },
    getDefaultLibFileName: (o) => `${libDir}/${ts.getDefaultLibFileName(o)}`,
    getDefaultLibLocation: () => libDir,
    writeFile: () => undefined,
    getCurrentDirectory: () => _ROOT,
    getDirectories: () => [],
    getCanonicalFileName: (fileName) => fileName,
    useCaseSensitiveFileNames: () => true,
    getNewLine: () => '\n',
    fileExists: (fileName) =>
      memory.has(fileName) || (fileName.startsWith(libDir) && libFile(ts, fileName, target) !== undefined),
    readFile: (fileName) => memory.get(fileName),
    directoryExists: () => false,
  }
}
