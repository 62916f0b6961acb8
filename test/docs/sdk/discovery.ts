/**
 * What docs/discovery.md's program block is checked against: `search_tools` as the PTC executor declares it, and
 * GitHub's `issues_create` (from the catalog fixture), a tool the program found.
 */
import { SEARCH_TOOLS_BINDING } from '@ptc/ptc'
import type { ToolDefinition } from '@ptc/tools'
import { githubCatalog } from '../../fixtures/catalogs/github.js'

const declared = (
  tool: { name: string; description: string; parameters: ToolDefinition['parameters'] },
  schema: ToolDefinition['output']['schema'] = {},
): ToolDefinition => ({
  ...tool,
  output: { schema, render: () => [] },
  execute: () => Promise.resolve(null),
})

const issuesCreate = githubCatalog().find((t) => t.name === 'issues_create')
if (issuesCreate === undefined) throw new Error('the GitHub catalog has no issues_create')

export const tools: ToolDefinition[] = [
  declared(SEARCH_TOOLS_BINDING, SEARCH_TOOLS_BINDING.output),
  declared(issuesCreate),
]
