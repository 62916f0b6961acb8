/**
 * The SDK section of a step's model input: the guidance and every declaration while they fit the budget; past it,
 * the guidance, the always-loaded declarations, `search_tools` and a compact catalog index. Remembered while the
 * tools stay the same registrations with the same names and descriptions, so a harness asking every turn pays
 * nothing and a provider's prompt cache sees the same bytes.
 */
import { renderDeclarations, searchToolsBinding, type BindingTool } from '@ptc/bindings'
import { RUN_CODE, type ToolDefinition } from '@ptc/tools'
import { catalogIndex } from './catalog-index.js'
import { SEARCH_TOOLS, type ResolvedDiscovery } from './options.js'
import { deferredGuidance } from './text.js'
import { bindingTool } from '../bindings.js'
import { declarationOf } from './search-tool.js'

/** A step's SDK section and whether its declarations were deferred. */
export interface SdkSection {
  readonly text: string
  readonly deferred: boolean
  /** The tools declared in full (all of them, or the always-loaded ones). */
  readonly declared: ReadonlySet<string>
}

/** What `search_tools` is declared as in the SDK text (and by `ptc check`). */
export const SEARCH_TOOLS_BINDING: BindingTool = searchToolsBinding

export function declarationsBlock(declarations: string): string {
  return `\`\`\`ts\n${declarations}\n\`\`\``
}

/** The whole section without discovery: the guidance and every declaration. */
export type FullSection = (definitions: readonly ToolDefinition[]) => string

/**
 * `definitions -> SdkSection` for one executor, remembering its last answer. `full` renders the section without
 * discovery (itself remembered); it is called only when the declarations may fit the budget.
 */
export function rememberedSections(
  guidance: string,
  discovery: ResolvedDiscovery,
  full: FullSection,
): (definitions: readonly ToolDefinition[]) => SdkSection {
  let last:
    | {
        readonly kept: readonly ToolDefinition[]
        readonly names: readonly string[]
        readonly descriptions: readonly string[]
        readonly section: SdkSection
      }
    | undefined
  return (definitions) => {
    const kept = definitions.filter((d) => d.name !== RUN_CODE && d.name !== SEARCH_TOOLS)
    const names = kept.map((d) => d.name)
    const descriptions = kept.map((d) => d.description)
    const before = last
    if (
      before !== undefined &&
      before.kept.length === kept.length &&
      kept.every(
        (d, i) => d === before.kept[i] && names[i] === before.names[i] && descriptions[i] === before.descriptions[i],
      )
    ) {
      return before.section
    }
    const section = sectionOf(guidance, discovery, kept, full)
    last = { kept, names, descriptions, section }
    return section
  }
}

function sectionOf(
  guidance: string,
  discovery: ResolvedDiscovery,
  kept: readonly ToolDefinition[],
  full: FullSection,
): SdkSection {
  if (mayFit(guidance, kept, discovery.budgetChars)) {
    const text = full(kept)
    if (text.length <= discovery.budgetChars)
      return { text, deferred: false, declared: new Set(kept.map((d) => d.name)) }
  }
  const always = kept.filter((d) => discovery.alwaysLoaded.has(d.name))
  const declarations = renderDeclarations([...always.map(bindingTool), SEARCH_TOOLS_BINDING])
  const head = `${guidance}\n\n${deferredGuidance(kept.length, always.length)}`
  const tail = `\n\n${declarationsBlock(declarations)}`
  const room = Math.max(0, discovery.budgetChars - head.length - tail.length - 1)
  const index = catalogIndex(
    kept.filter((d) => !discovery.alwaysLoaded.has(d.name)).map((d) => d.name),
    discovery,
    room,
  )
  const text = `${head}${index === '' ? '' : `\n${index}`}${tail}`
  return { text, deferred: true, declared: new Set(always.map((d) => d.name)) }
}

/** Whether the whole section may fit: the tools' declarations are rendered one by one, stopping past the budget. */
function mayFit(guidance: string, kept: readonly ToolDefinition[], budget: number): boolean {
  let used = guidance.length
  for (const d of kept) {
    used += declarationOf(d).length
    if (used > budget) return false
  }
  return true
}
