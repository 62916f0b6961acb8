/**
 * Type-checks documentation blocks as modules with the TypeScript compiler API and the repository's
 * options (`tsconfig.base.json`: strict, exact optional properties, unchecked index access, the
 * `@ptc/source` condition, so the blocks see the packages' sources and need no build).
 *
 * Each block is written to `node_modules/.cache/ptc-docs/`, where the workspace packages resolve as they
 * do for a user who installed them. A package a block imports that is a dependency of a workspace
 * package but not of the root (`ai`, `@modelcontextprotocol/sdk`) resolves from that package, as it
 * does for a user who installed both.
 */
import { mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import ts from 'typescript'
import type { CodeBlock } from './blocks.js'

export interface BlockDiagnostic {
  /** `README.md:57`: the markdown line of the problem. */
  readonly where: string
  readonly code: number
  readonly message: string
}

/** Where a block is written: one file per block, named after its markdown file and line. */
export function blockPath(cacheDir: string, block: CodeBlock): string {
  return join(cacheDir, `${block.file.replace(/[^A-Za-z0-9]+/g, '_')}_L${block.line}.ts`)
}

/** The block as a module: a block without imports or exports is still a module (top-level await works). */
export function moduleText(block: CodeBlock): string {
  return `${block.code}\nexport {}\n`
}

function compilerOptions(root: string): ts.CompilerOptions {
  const configPath = join(root, 'tsconfig.base.json')
  const read = ts.readConfigFile(configPath, (path) => ts.sys.readFile(path))
  if (read.error !== undefined) throw new Error(ts.flattenDiagnosticMessageText(read.error.messageText, '\n'))
  const parsed = ts.parseJsonConfigFileContent(read.config, ts.sys, root, undefined, configPath)
  return { ...parsed.options, noEmit: true, declaration: false, sourceMap: false }
}

function workspaceDirs(root: string): string[] {
  const dirs = [join(root, 'bindings')]
  for (const parent of ['packages', 'sandbox'])
    for (const entry of readdirSync(join(root, parent))) dirs.push(join(root, parent, entry))
  return dirs
}

/**
 * Type-checks `blocks` in one program and returns each block's diagnostics (only those in the block
 * itself), keyed by the block.
 */
export function typeCheckBlocks(root: string, blocks: readonly CodeBlock[]): Map<CodeBlock, BlockDiagnostic[]> {
  const cacheDir = join(root, 'node_modules/.cache/ptc-docs')
  rmSync(cacheDir, { recursive: true, force: true })
  mkdirSync(cacheDir, { recursive: true })
  // ES modules when run (a folder under node_modules is outside the root package.json's `type`).
  writeFileSync(join(cacheDir, 'package.json'), '{ "type": "module" }\n')
  const files = new Map<string, CodeBlock>()
  for (const block of blocks) {
    const path = blockPath(cacheDir, block)
    writeFileSync(path, moduleText(block))
    files.set(path, block)
  }
  const options = compilerOptions(root)
  const host = ts.createCompilerHost(options)
  const fallbacks = workspaceDirs(root).map((dir) => join(dir, '__docs__.ts'))
  host.resolveModuleNameLiterals = (literals, containingFile, redirected, opts) =>
    literals.map((literal) => {
      const resolved = ts.resolveModuleName(literal.text, containingFile, opts, host, undefined, redirected)
      if (resolved.resolvedModule !== undefined || !files.has(containingFile)) return resolved
      for (const from of fallbacks) {
        const again = ts.resolveModuleName(literal.text, from, opts, host, undefined, redirected)
        if (again.resolvedModule !== undefined) return again
      }
      return resolved
    })
  const program = ts.createProgram({ rootNames: [...files.keys()], options, host })
  const out = new Map<CodeBlock, BlockDiagnostic[]>()
  for (const [path, block] of files) {
    const source = program.getSourceFile(path)
    if (source === undefined) throw new Error(`the compiler did not load ${path}`)
    const diagnostics = [...program.getSyntacticDiagnostics(source), ...program.getSemanticDiagnostics(source)]
    out.set(
      block,
      diagnostics.map((d) => {
        const line = d.start === undefined ? 0 : source.getLineAndCharacterOfPosition(d.start).line
        return {
          where: `${block.file}:${block.line + 1 + line}`,
          code: d.code,
          message: ts.flattenDiagnosticMessageText(d.messageText, '\n'),
        }
      }),
    )
  }
  const global = program.getGlobalDiagnostics().concat(program.getOptionsDiagnostics())
  if (global.length > 0)
    throw new Error(
      `compiler options: ${global.map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n')).join('; ')}`,
    )
  return out
}
