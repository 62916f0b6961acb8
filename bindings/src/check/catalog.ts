import type * as TS from 'typescript'
import {
  renderDeclarations,
  renderToolDeclaration,
  type BindingTool,
  type RenderDeclarationsOptions,
} from '../render/declarations.js'
import type { CheckProgramOptions } from './types.js'
import { _parseProgram, _programFile } from './compile.js'
import { _programMentions } from './mentions.js'
import { searchToolsBinding } from '../render/search-tools.js'
import { _spellingSuggestion } from './spelling.js'
import { _typescript } from './typescript.js'

/**
 * Every tool a program may call, read lazily: `names()` once per check, a tool (its schemas or its declaration)
 * only for the names the program mentions and the closest name to a misspelt one. Called on the caller's thread.
 */
export type ToolCatalog = ToolSchemaCatalog | ToolDeclarationCatalog

interface CatalogNames {
  /** The names of all the tools (all registered tools, not only the ones the model was shown). */
  names(): readonly string[]
}

/** A catalog that gives each tool's schemas: the checker renders the ones it reads. */
export interface ToolSchemaCatalog extends CatalogNames {
  /** The tool of that name, or undefined when there is none. */
  tool(name: string): BindingTool | undefined
}

/** A catalog that gives each tool's declaration, as `renderToolDeclaration` renders it (and `search_tools` returns). */
export interface ToolDeclarationCatalog extends CatalogNames {
  /** The declaration of the tool of that name, or undefined when there is none. */
  declaration(name: string): string | undefined
}

/** Whether a catalog gives declarations (else schemas). Internal. */
export const _givesDeclarations = (catalog: ToolCatalog): catalog is ToolDeclarationCatalog => !('tool' in catalog)

/** What the catalog gives for one name: its schemas or its declaration. Internal. */
export function _readCatalog(catalog: ToolCatalog, name: string): BindingTool | string | undefined {
  return _givesDeclarations(catalog) ? catalog.declaration(name) : catalog.tool(name)
}

/** What a program is checked against instead of one declarations text: a catalog of tools. */
export interface CatalogSdk {
  readonly catalog: ToolCatalog
  /** Declare the built-in `search_tools` (`searchToolsBinding`) unless the catalog has that name. Default true. */
  readonly searchTools?: boolean
  /** How each tool's declarations are rendered (as `renderDeclarations`). */
  readonly render?: RenderDeclarationsOptions
}

/** Code-unit order, as `renderDeclarations` sorts: TypeScript offers the first of equally close names. */
const byCodeUnits = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0)

function catalogNames(sdk: CatalogSdk): { names: string[]; builtin: boolean } {
  const names = new Set(sdk.catalog.names().filter((name) => typeof name === 'string' && name !== ''))
  const builtin = sdk.searchTools !== false && !names.has(searchToolsBinding.name)
  if (builtin) names.add(searchToolsBinding.name)
  return { names: [...names].sort(byCodeUnits), builtin }
}

/** The names of the catalog a program can reach, and the closest name to each key it writes that is not one. */
function reachable(ts: typeof TS, file: TS.SourceFile, names: readonly string[]): Set<string> {
  const mentions = _programMentions(ts, file)
  const known = new Set(names)
  const selected = new Set([...mentions.names].filter((name) => known.has(name)))
  for (const key of mentions.keys) {
    if (known.has(key)) continue
    // TypeScript looks up `tools["__x"]` by its escaped name, `___x`, and suggests a name close to that one.
    for (const looked of key.startsWith('__') ? [key, `_${key}`] : [key]) {
      const suggestion = _spellingSuggestion(looked, names)
      if (suggestion !== undefined) selected.add(suggestion)
    }
  }
  return selected
}

/** The catalog's names to read `tool` of, sorted, and whether the built-in `search_tools` is declared too. */
function selection(ts: typeof TS, file: TS.SourceFile, sdk: CatalogSdk): { names: string[]; searchTools: boolean } {
  const { names, builtin } = catalogNames(sdk)
  const selected = reachable(ts, file, names)
  const searchTools = builtin && selected.delete(searchToolsBinding.name)
  return { names: [...selected].sort(byCodeUnits), searchTools }
}

/**
 * The names whose `tool` a check of `code` against `sdk` reads from the catalog: the catalog's names the program
 * mentions (as an identifier or a string), and the closest name to each one it writes after a dot, as a key or as
 * a string that is none (for "Did you mean …?"). For a caller that fetches those tools before checking.
 */
export function checkedToolNames(code: string, sdk: CatalogSdk, options: CheckProgramOptions = {}): string[] {
  const ts = _typescript()
  return selection(ts, _parseProgram(ts, _programFile(code, options)), sdk).names
}

/** The declarations of the tools a program can reach, and its parsed file (checked next, not parsed again). */
export function _catalogDeclarations(
  ts: typeof TS,
  code: string,
  sdk: CatalogSdk,
  options: CheckProgramOptions,
): { declarations: string; parsed: TS.SourceFile } {
  const parsed = _parseProgram(ts, _programFile(code, options))
  const { names, searchTools } = selection(ts, parsed, sdk)
  const { catalog } = sdk
  if (_givesDeclarations(catalog)) {
    // Each declaration adds members to the interfaces, merged in name order as `renderDeclarations` sorts them.
    const builtin = searchTools ? renderToolDeclaration(searchToolsBinding, sdk.render) : undefined
    const parts = [...names.map((name) => ({ name, text: catalog.declaration(name) }))]
    if (builtin !== undefined) parts.push({ name: searchToolsBinding.name, text: builtin })
    parts.sort((a, b) => byCodeUnits(a.name, b.name))
    const declarations = [renderDeclarations([], sdk.render), ...parts.map((part) => part.text ?? '')].join('\n')
    return { declarations, parsed }
  }
  const tools: BindingTool[] = searchTools ? [searchToolsBinding] : []
  for (const name of names) {
    const tool = catalog.tool(name)
    if (tool !== undefined) tools.push(tool)
  }
  return { declarations: renderDeclarations(tools, sdk.render), parsed }
}
