import { describe, expect, test } from 'vitest'
import { catalogIndex } from './catalog-index.js'
import { defaultNamespace, resolveDiscovery } from './options.js'

const discovery = (options: Parameters<typeof resolveDiscovery>[0] = {}) => {
  const resolved = resolveDiscovery(options)
  if (resolved === undefined) throw new Error('discovery is off')
  return resolved
}

describe('the catalog index', () => {
  test('namespaces come from the name: up to the first dot, else the first _, - or /', () => {
    expect(['fs.read_text_file', 'issues_create', 'repos-get', 'a/b', 'plain'].map(defaultNamespace)).toEqual([
      'fs',
      'issues',
      'repos',
      'a',
      'plain',
    ])
  })

  test('the largest namespaces come first, each with its count and its shortest names', () => {
    const names = [
      'mail.send',
      'mail.archive',
      'issues.create',
      'issues.close',
      'issues.comment_on_a_thread',
      'issues.get',
      'issues.list',
    ]
    expect(catalogIndex(names, discovery(), 10_000).split('\n')).toEqual([
      '- issues (5 tools): e.g. issues.get, issues.list, issues.close, issues.create, …',
      '- mail (2 tools): e.g. mail.send, mail.archive',
    ])
  })

  test('a namespace of its own line and one description on one line; a custom namespace function', () => {
    const names = ['a__x', 'a__y', 'b__z']
    const text = catalogIndex(
      names,
      discovery({ namespace: (n) => n.split('__')[0] ?? n, namespaces: { a: 'The A\nservice.' } }),
      10_000,
    )
    expect(text).toBe('- a (2 tools): The A service.\n- b (1 tool): e.g. b__z')
  })

  test('cut to the budget, the rest is counted in one closing line; nothing at all when even that does not fit', () => {
    const names = Array.from({ length: 40 }, (_, i) => `ns${String(i).padStart(2, '0')}.tool`)
    const text = catalogIndex(names, discovery(), 300)
    expect(text.length).toBeLessThanOrEqual(300)
    expect(text.split('\n').at(-1)).toMatch(/^- … and \d+ more namespaces \(\d+ tools\): find them with search_tools$/)
    expect(catalogIndex(names, discovery(), 20)).toBe('')
  })

  test('the same names in any order give the same text', () => {
    const names = ['x.a', 'y.b', 'x.c', 'z.d', 'y.e']
    expect(catalogIndex([...names].reverse(), discovery(), 1_000)).toBe(catalogIndex(names, discovery(), 1_000))
  })
})
