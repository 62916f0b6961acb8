import { describe, expect, test } from 'vitest'
import { ToolSearchIndex } from './index.js'
import { MAX_PATTERN_CHARS } from './regex-query.js'

const parameters = { type: 'object' as const, properties: {} }

function indexOf(...names: string[]): ToolSearchIndex {
  const index = new ToolSearchIndex()
  for (const key of names) index.add({ key, description: `the ${key} tool`, parameters })
  return index
}

const keys = (index: ToolSearchIndex, query: string, limit = 50): string[] =>
  index.search(query, { limit }).map((hit) => hit.key)

describe('name patterns', () => {
  const index = indexOf(
    'github.create_issue',
    'github.list_issues',
    'GitHub.get_me',
    'slack.post_message',
    'issues_create',
  )

  test('/pattern/ matches tool names, ranked by key', () => {
    expect(keys(index, '/^github\\./')).toEqual(['github.create_issue', 'github.list_issues'])
    expect(keys(index, '/issue/')).toEqual(['github.create_issue', 'github.list_issues', 'issues_create'])
  })

  test('/pattern/i ignores case', () => {
    expect(keys(index, '/^github\\./i')).toEqual(['GitHub.get_me', 'github.create_issue', 'github.list_issues'])
  })

  test('the limit and the filter apply', () => {
    expect(keys(index, '/issue/', 1)).toEqual(['github.create_issue'])
    expect(
      index.search('/issue/', { limit: 5, filter: (key) => !key.startsWith('github.') }).map((h) => h.key),
    ).toEqual(['issues_create'])
  })

  test('a catastrophic pattern against long names answers (RE2 does not backtrack)', () => {
    const long = indexOf(`${'a'.repeat(20_000)}!`, 'a'.repeat(20_000), `x${'a'.repeat(5_000)}y`)
    expect(keys(long, '/(a+)+$/')).toEqual(['a'.repeat(20_000)])
    expect(keys(long, '/^(a|aa)*$/')).toEqual(['a'.repeat(20_000)])
    expect(keys(long, '/(a*)*b/')).toEqual([])
  })

  test('an invalid pattern is a TypeError naming what to change', () => {
    expect(() => index.search('/(unclosed/', { limit: 5 })).toThrow(TypeError)
    expect(() => index.search('/(unclosed/', { limit: 5 })).toThrow(
      /not a valid RE2 regular expression \(missing closing \)/,
    )
  })

  test('lookarounds and backreferences are refused, not emulated', () => {
    expect(() => index.search('/(?=github)/', { limit: 5 })).toThrow(/Lookarounds and backreferences are not supported/)
    expect(() => index.search('/(a)\\1/', { limit: 5 })).toThrow(TypeError)
  })

  test('flags other than i are refused', () => {
    expect(() => index.search('/github/g', { limit: 5 })).toThrow(/only "i" \(ignore case\) is supported/)
  })

  test('a pattern longer than the bound is refused', () => {
    expect(() => index.search(`/${'a'.repeat(MAX_PATTERN_CHARS + 1)}/`, { limit: 5 })).toThrow(/shorten it to at most/)
    expect(keys(index, `/${'a?'.repeat(MAX_PATTERN_CHARS / 2 - 1)}/`)).toHaveLength(5)
  })

  test('a lone slash or an empty pattern is an ordinary query', () => {
    expect(() => index.search('/', { limit: 5 })).not.toThrow()
    expect(() => index.search('//', { limit: 5 })).not.toThrow()
  })
})

describe('empty queries', () => {
  test.each(['', '   ', '\n\t'])('%j is a TypeError that says what to give', (query) => {
    expect(() => indexOf('a').search(query, { limit: 5 })).toThrow(TypeError)
    expect(() => indexOf('a').search(query, { limit: 5 })).toThrow(/needs a non-empty query/)
  })
})
