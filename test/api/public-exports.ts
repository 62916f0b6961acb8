/**
 * The public face of every package: each entry of each workspace package's `exports` map, with the
 * names it exports (values and types), read by the TypeScript checker from the entry's source.
 */
import { readdirSync, readFileSync, existsSync } from 'node:fs'
import { join } from 'node:path'
import ts from 'typescript'

/** `@ptc/sandbox` -> `./src/index.ts`, `@ptc/sandbox/backend` -> `./src/backend/index.ts`, … (absolute paths). */
export function entryPoints(root: string): Map<string, string> {
  const dirs = [
    'bindings',
    ...['packages', 'sandbox'].flatMap((parent) => readdirSync(join(root, parent)).map((d) => join(parent, d))),
  ]
  const entries = new Map<string, string>()
  for (const dir of dirs) {
    const file = join(root, dir, 'package.json')
    if (!existsSync(file)) continue
    const manifest = JSON.parse(readFileSync(file, 'utf8')) as {
      name: string
      exports?: Record<string, Record<string, string>>
    }
    for (const [subpath, conditions] of Object.entries(manifest.exports ?? {})) {
      const source = conditions['@ptc/source']
      if (source === undefined) throw new Error(`${manifest.name}: exports["${subpath}"] has no @ptc/source condition`)
      entries.set(subpath === '.' ? manifest.name : `${manifest.name}${subpath.slice(1)}`, join(root, dir, source))
    }
  }
  return entries
}

/** The names each entry exports, sorted, keyed like `entryPoints`. */
export function exportedNames(root: string): Record<string, string[]> {
  const entries = entryPoints(root)
  const program = ts.createProgram([...entries.values()], {
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.ESNext,
    moduleResolution: ts.ModuleResolutionKind.Bundler,
    customConditions: ['@ptc/source'],
    strict: true,
    skipLibCheck: true,
    noEmit: true,
    types: ['node'],
  })
  const checker = program.getTypeChecker()
  const out: Record<string, string[]> = {}
  for (const [name, file] of [...entries].sort(([a], [b]) => (a < b ? -1 : 1))) {
    const source = program.getSourceFile(file)
    const symbol = source === undefined ? undefined : checker.getSymbolAtLocation(source)
    if (symbol === undefined) throw new Error(`${name}: cannot read the module ${file}`)
    out[name] = checker
      .getExportsOfModule(symbol)
      .map((s) => s.name)
      .sort()
  }
  return out
}
