/** Every sentence the model reads about tool discovery, in one place. */
import { SEARCH_TOOLS } from './options.js'

/** The guidance that replaces the full declarations past the budget. */
export function deferredGuidance(total: number, declared: number): string {
  const shown =
    declared === 0 ? 'none is declared below' : `only ${declared} ${declared === 1 ? 'is' : 'are'} declared below`
  return [
    `There are ${total} tools; ${shown}. Find the others with \`${SEARCH_TOOLS}\`, in a program:`,
    `\`const { tools: found } = await tools.${SEARCH_TOOLS}({ query: "create an issue" })\` gives each match's ` +
      `\`name\`,`,
    '`description` and TypeScript `declaration`; call one in the same program with `await tools[found[0].name](args)`,',
    `or read the declarations first (call \`${SEARCH_TOOLS}\` directly, or print them) and write the calls next.`,
    'A query is plain words, an exact tool name, or /regex/ over names. The tools, by namespace:',
  ].join('\n')
}

/** One line of the catalog index. */
export function namespaceLine(namespace: string, count: number, about: string): string {
  return `- ${namespace} (${count} ${count === 1 ? 'tool' : 'tools'}): ${about}`
}

/** The last line of an index cut to the budget. */
export function moreNamespacesLine(namespaces: number, tools: number): string {
  return (
    `- … and ${namespaces} more ${namespaces === 1 ? 'namespace' : 'namespaces'} (${tools} tools): find them ` +
    `with ${SEARCH_TOOLS}`
  )
}

/** What a direct call of the search tool shows the model. */
export function searchResultText(found: readonly { name: string; description: string; declaration: string }[]): string {
  if (found.length === 0) return 'No tool matches. Try other words, a shorter query, or /regex/ over tool names.'
  return found
    .map(
      (t) =>
        `${t.name}: ` +
        `${t.description.trim() === '' ? '(no description)' : t.description.trim()}\n\`\`\`ts\n${t.declaration}\`\`\``,
    )
    .join('\n\n')
}
