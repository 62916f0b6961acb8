import { describe, expect, test } from 'vitest'
import type { JsonSchemaNode } from '@ptc/tools'
import { ToolSearchIndex, type SearchDocument } from './index.js'

const noParameters: JsonSchemaNode = { type: 'object', properties: {} }
const doc = (key: string, description: string, parameters: JsonSchemaNode = noParameters): SearchDocument => ({
  key,
  description,
  parameters,
})

function indexOf(...docs: SearchDocument[]): ToolSearchIndex {
  const index = new ToolSearchIndex()
  for (const d of docs) index.add(d)
  return index
}

const keys = (index: ToolSearchIndex, query: string, limit = 5): string[] =>
  index.search(query, { limit }).map((hit) => hit.key)

const catalog = [
  doc('issues_create', 'Create an issue', {
    type: 'object',
    properties: { title: { type: 'string' }, body: { type: 'string' } },
  }),
  doc('issues_get', 'Get an issue'),
  doc('issues_list_for_repo', 'List repository issues'),
  doc('pulls_create', 'Create a pull request'),
  doc('repos_delete', 'Delete a repository'),
  doc('github.create_issue', 'Open a new issue in a GitHub repository'),
  doc('filesystem.read_text_file', 'Read the complete contents of a file from the file system as text'),
  doc('playwright.browser_take_screenshot', 'Take a screenshot of the current page'),
]

describe('ranking', () => {
  test('a request finds the tool whose name and description say it', () => {
    const index = indexOf(...catalog)
    expect(keys(index, 'delete a repository')[0]).toBe('repos_delete')
    expect(keys(index, 'take a screenshot of the page')[0]).toBe('playwright.browser_take_screenshot')
  })

  test('abbreviations and synonyms reach the words a declaration uses', () => {
    const index = indexOf(...catalog)
    expect(keys(index, 'open a PR')[0]).toBe('pulls_create')
    expect(keys(index, 'remove a repo')[0]).toBe('repos_delete')
    expect(keys(index, 'show the contents of a file')[0]).toBe('filesystem.read_text_file')
  })

  test('parameter names and descriptions count', () => {
    const index = indexOf(
      doc('a_tool', 'Does something', {
        type: 'object',
        properties: { timezone: { type: 'string', description: 'IANA zone' } },
      }),
      doc('b_tool', 'Does something else'),
    )
    expect(keys(index, 'timezone')).toEqual(['a_tool'])
  })

  test('an exact name comes first, ignoring case and separators, and also after a namespace', () => {
    const index = indexOf(...catalog)
    expect(keys(index, 'ISSUES-GET')[0]).toBe('issues_get')
    expect(keys(index, 'issuesGet')[0]).toBe('issues_get')
    expect(keys(index, 'read_text_file')[0]).toBe('filesystem.read_text_file')
    expect(keys(index, 'github.create_issue')[0]).toBe('github.create_issue')
  })

  test('the full name outranks the same name after a namespace', () => {
    const index = indexOf(doc('tools.ping', 'Ping'), doc('ping', 'Ping'))
    expect(keys(index, 'ping')).toEqual(['ping', 'tools.ping'])
  })

  test('ties are broken by key, so results are deterministic', () => {
    const index = indexOf(doc('b_same', 'same words'), doc('c_same', 'same words'), doc('a_same', 'same words'))
    expect(keys(index, 'same words')).toEqual(['a_same', 'b_same', 'c_same'])
  })

  test('limit bounds the hits and is clamped to 1..50', () => {
    const many = Array.from({ length: 80 }, (_, i) => doc(`tool_${String(i).padStart(2, '0')}`, 'common word'))
    const index = indexOf(...many)
    expect(keys(index, 'common', 3)).toHaveLength(3)
    expect(keys(index, 'common', 500)).toHaveLength(50)
    expect(keys(index, 'common', 0)).toHaveLength(1)
  })

  test('the filter removes keys and the next ones take their places', () => {
    const index = indexOf(...catalog)
    const hits = index.search('issue', { limit: 2, filter: (key) => key !== 'issues_get' && key !== 'issues_create' })
    expect(hits.map((hit) => hit.key)).not.toContain('issues_get')
    expect(hits).toHaveLength(2)
  })

  test('the filter also applies to an exact name match', () => {
    const index = indexOf(...catalog)
    expect(
      index.search('issues_get', { limit: 5, filter: (key) => key !== 'issues_get' }).map((h) => h.key),
    ).not.toContain('issues_get')
  })

  test('a query without any known word finds nothing', () => {
    expect(keys(indexOf(...catalog), 'zyxwvut')).toEqual([])
  })
})

describe('incremental index', () => {
  test('add replaces the document with the same key', () => {
    const index = indexOf(doc('t', 'alpha'))
    index.add(doc('t', 'beta'))
    expect(index.size).toBe(1)
    expect(keys(index, 'alpha')).toEqual([])
    expect(keys(index, 'beta')).toEqual(['t'])
  })

  test('remove forgets a document; has and size follow', () => {
    const index = indexOf(...catalog)
    expect(index.has('repos_delete')).toBe(true)
    expect(index.remove('repos_delete')).toBe(true)
    expect(index.remove('repos_delete')).toBe(false)
    expect(index.has('repos_delete')).toBe(false)
    expect(index.size).toBe(catalog.length - 1)
    expect(keys(index, 'repos_delete')).not.toContain('repos_delete')
    expect(keys(index, '/repos/')).toEqual([])
  })

  test("a document added in a removed one's place does not inherit its words", () => {
    const index = indexOf(doc('old', 'kangaroo'), doc('other', 'wombat'))
    index.remove('old')
    index.add(doc('new', 'platypus'))
    expect(keys(index, 'kangaroo')).toEqual([])
    expect(keys(index, 'platypus')).toEqual(['new'])
    expect(keys(index, 'wombat')).toEqual(['other'])
  })

  test('scores after removals equal those of an index built without the removed documents', () => {
    const incremental = indexOf(...catalog, doc('extra_issue_tool', 'issue issue issue'))
    incremental.remove('extra_issue_tool')
    expect(incremental.search('create an issue', { limit: 5 })).toEqual(
      indexOf(...catalog).search('create an issue', { limit: 5 }),
    )
  })
})

describe('bounded input', () => {
  test('a deeply nested or huge parameter schema is indexed within bounds', () => {
    let deep: JsonSchemaNode = { type: 'string', description: 'needle' }
    for (let i = 0; i < 5_000; i++) deep = { type: 'object', properties: { [`level${i}`]: deep } }
    const wide: JsonSchemaNode = {
      type: 'object',
      properties: Object.fromEntries(
        Array.from({ length: 10_000 }, (_, i) => [`field${i}`, { type: 'string' as const }]),
      ),
    }
    const index = indexOf(doc('deep', 'deep tool', deep), doc('wide', 'wide tool', wide))
    expect(keys(index, 'needle')).toEqual([])
    expect(keys(index, 'level4999')).toEqual(['deep'])
    expect(keys(index, 'field9999')).toEqual([])
  })

  test('a very long query is cut, not refused', () => {
    const index = indexOf(...catalog)
    expect(keys(index, `delete a repository ${'padding '.repeat(10_000)}`)[0]).toBe('repos_delete')
  })
})
