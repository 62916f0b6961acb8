import { extname, resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
import type { ToolDefinition, ToolsView } from '@ptc/tools'
import { createShop, installShopPolicy, shopTools } from './demo/index.js'
import { CliError, firstLine, userCodeError, type CliErrorCode } from './errors.js'
import { checkRegularFile } from './input-file.js'

/** The tools a command works with, and the policy to install next to them. */
export interface ToolSet {
  /** `built-in demo (shop)` or the module's path. */
  readonly label: string
  readonly tools: readonly ToolDefinition[]
  /** Installs the set's policy (the demo's approval rule and refund guard); modules have none. */
  readonly install?: (tools: ToolsView) => void
}

/** The built-in demo: the shop's tools over a fresh copy of its data, with its policy. */
export function demoToolSet(): ToolSet {
  const shop = createShop()
  return {
    label: 'built-in demo (shop)',
    tools: shopTools({ shop }),
    install: (tools) => void installShopPolicy(tools, { shop }),
  }
}

const TS_EXTENSIONS = new Set(['.ts', '.mts', '.cts'])

/** The largest tools module file loaded (the modules it imports are not checked). */
export const MAX_TOOLS_MODULE_BYTES = 16 * 1024 * 1024

/**
 * Loads the tools of an ES module: its default export (a tool or an array of
 * tools) and every named export (each a tool or an array of tools). `.ts`
 * modules load through tsx. The path must be a regular file of at most
 * `MAX_TOOLS_MODULE_BYTES` (checked before the import, which would block on a
 * FIFO or a device). Every problem is a `CliError('TOOLS_MODULE')`.
 */
export async function loadToolSet(spec: string | undefined, cwd: string): Promise<ToolSet> {
  if (spec === undefined) return demoToolSet()
  const path = resolve(cwd, spec)
  await checkModuleFile({ what: 'tools module', shown: spec, path, code: 'TOOLS_MODULE' })
  let namespace: Record<string, unknown>
  try {
    namespace = await importModuleFile(path, 'tools module', 'TOOLS_MODULE')
  } catch (error) {
    if (error instanceof CliError) throw error
    throw userCodeError('TOOLS_MODULE', `tools module ${spec} failed to load: ${firstLine(error)}`, error, {
      path,
      shown: spec,
    })
  }
  let tools: ToolDefinition[]
  try {
    tools = toolsOf(spec, namespace)
  } catch (error) {
    if (error instanceof CliError) throw error
    const file = { path, shown: spec }
    throw userCodeError(
      'TOOLS_MODULE',
      `tools module ${spec}: its exports cannot be read: ${firstLine(error)}`,
      error,
      file,
    )
  }
  if (tools.length === 0)
    throw new CliError(
      'TOOLS_MODULE',
      `tools module ${spec} exports no tools; export tools made with defineTool (default export: an array)`,
    )
  return { label: spec, tools }
}

/**
 * The tools among a module's exports; an export that is not a tool is a `CliError`. May throw what a hostile export
 * throws.
 */
function toolsOf(spec: string, namespace: Record<string, unknown>): ToolDefinition[] {
  const tools: ToolDefinition[] = []
  for (const [name, value] of Object.entries(namespace)) {
    const label = name === 'default' ? 'the default export' : `export "${name}"`
    const items = Array.isArray(value) ? (value as unknown[]) : [value]
    items.forEach((item, i) => {
      const problem = toolProblem(item)
      const where = Array.isArray(value) ? `${label}[${i}]` : label
      if (problem !== undefined)
        throw new CliError(
          'TOOLS_MODULE',
          `tools module ${spec}: ${where} is not a tool (${problem}); export tools made with defineTool`,
        )
      tools.push(item as ToolDefinition)
    })
  }
  return tools
}

/**
 * A module file (tools module or config) before it is imported: a regular file of at most
 * `MAX_TOOLS_MODULE_BYTES` (an import would block on a FIFO or a device), else a `CliError(code)`;
 * a missing one says `<what> <shown> not found`.
 */
export async function checkModuleFile(file: {
  what: string
  shown: string
  path: string
  code: CliErrorCode
}): Promise<void> {
  try {
    await checkRegularFile({ ...file, maxBytes: MAX_TOOLS_MODULE_BYTES })
  } catch (error) {
    if ((error as { cause?: { code?: unknown } }).cause?.code === 'ENOENT')
      throw new CliError(file.code, `${file.what} ${file.shown} not found`, { cause: error })
    throw error
  }
}

/**
 * Imports an ES module file; `.ts`, `.mts` and `.cts` load through tsx (a
 * missing tsx is a `CliError(code)` naming `what`). Throws what the import throws.
 */
export async function importModuleFile(
  path: string,
  what: string,
  code: CliErrorCode,
): Promise<Record<string, unknown>> {
  if (!TS_EXTENSIONS.has(extname(path).toLowerCase()))
    return (await import(pathToFileURL(path).href)) as Record<string, unknown>
  let api: { tsImport: (specifier: string, parent: string) => Promise<unknown> }
  try {
    api = (await import('tsx/esm/api')) as typeof api
  } catch (error) {
    throw new CliError(code, `a TypeScript ${what} needs the tsx package (npm i tsx); or pass a compiled .js module`, {
      cause: error,
    })
  }
  return (await api.tsImport(pathToFileURL(path).href, import.meta.url)) as Record<string, unknown>
}

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null

/** Why `value` is not a tool definition, or `undefined` when it looks like one (registration checks the rest). */
export function toolProblem(value: unknown): string | undefined {
  if (!isRecord(value) || Array.isArray(value))
    return value === null ? 'null' : `a ${Array.isArray(value) ? 'nested array' : typeof value}`
  if (typeof value.name !== 'string') return 'no name'
  if (typeof value.description !== 'string') return 'no description'
  if (!isRecord(value.parameters)) return 'no parameters schema'
  if (!isRecord(value.output) || typeof value.output.render !== 'function') return 'no output { schema, render }'
  if (typeof value.execute !== 'function') return 'no execute function'
  return undefined
}
