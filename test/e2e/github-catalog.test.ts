/**
 * The large-catalog example as a user runs it: a child process over the GitHub catalog, whose program finds two
 * tools with search_tools and calls them.
 */
import { execFile } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { expect, test } from 'vitest'

const ROOT = fileURLToPath(new URL('../..', import.meta.url))

test('examples/github-catalog.ts finds and calls two GitHub tools within the discovery budget', async () => {
  const { stdout } = await promisify(execFile)(
    process.execPath,
    ['--conditions=@ptc/source', '--import', 'tsx', 'examples/github-catalog.ts'],
    {
      cwd: ROOT,
      timeout: 60_000,
    },
  )
  expect(stdout).toMatch(/^\d{4} tools\. Model tools: run_code, search_tools$/m)
  const [, withDiscovery, every] =
    /SDK text: (\d+) characters with discovery, (\d+) with every declaration/.exec(stdout) ?? []
  expect(Number(withDiscovery)).toBeLessThanOrEqual(8_000)
  expect(Number(every)).toBeGreaterThan(100 * Number(withDiscovery))
  expect(stdout).toContain(
    'Sub-calls: search_tools, search_tools, issues_list_for_repo, issues_create_comment, issues_create_comment',
  )
  expect(stdout).toContain('Comments posted: #2, #3')
  expect(stdout).toContain('found issues_list_for_repo and issues_create_comment')
})
