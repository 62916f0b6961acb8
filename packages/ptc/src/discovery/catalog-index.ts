/** The compact catalog index the model reads past the budget: one line per namespace, cut to fit. */
import type { ResolvedDiscovery } from './options.js'
import { moreNamespacesLine, namespaceLine } from './text.js'

/** Example names shown on a namespace's line without a description of its own. */
const EXAMPLES = 4
/** The longest line of the index; a longer description is cut. */
const MAX_LINE_CHARS = 120

/**
 * The index lines of `names`, at most `budget` characters joined by newlines. Namespaces with the most tools come
 * first (then by name); only the names decide the text, so it changes only when the catalog does.
 */
export function catalogIndex(names: readonly string[], discovery: ResolvedDiscovery, budget: number): string {
  const groups = new Map<string, string[]>()
  for (const name of names) {
    const namespace = namespaceOf(discovery, name)
    const group = groups.get(namespace)
    if (group === undefined) groups.set(namespace, [name])
    else group.push(name)
  }
  const ordered = [...groups].sort(([a, x], [b, y]) => y.length - x.length || compare(a, b))
  const lines: string[] = []
  let used = 0
  for (const [i, [namespace, members]] of ordered.entries()) {
    const line = cut(namespaceLine(namespace, members.length, discovery.namespaces.get(namespace) ?? examples(members)))
    const rest = ordered.slice(i + 1)
    // Room for the line, and for the closing line when namespaces remain after it.
    const closing = rest.length === 0 ? 0 : moreLine(rest).length + 1
    if (used + line.length + 1 + closing > budget) {
      const left = ordered.slice(i)
      const more = moreLine(left)
      if (used + more.length <= budget) lines.push(more)
      break
    }
    lines.push(line)
    used += line.length + 1
  }
  return lines.join('\n')
}

function moreLine(groups: readonly (readonly [string, readonly string[]])[]): string {
  return moreNamespacesLine(
    groups.length,
    groups.reduce((sum, [, members]) => sum + members.length, 0),
  )
}

/** The shortest names first: they are most often the namespace's core operations. */
function examples(members: readonly string[]): string {
  const shown = [...members].sort((a, b) => a.length - b.length || compare(a, b)).slice(0, EXAMPLES)
  return `e.g. ${shown.join(', ')}${members.length > shown.length ? ', …' : ''}`
}

function namespaceOf(discovery: ResolvedDiscovery, name: string): string {
  try {
    const namespace = discovery.namespace(name)
    return typeof namespace === 'string' && namespace !== '' ? namespace : name
  } catch {
    return name
  }
}

/** One line, whatever the description held; longer than `MAX_LINE_CHARS` is cut. */
function cut(text: string): string {
  const line = text.replace(/\s+/g, ' ')
  return line.length <= MAX_LINE_CHARS ? line : `${line.slice(0, MAX_LINE_CHARS - 1)}…`
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0
}
