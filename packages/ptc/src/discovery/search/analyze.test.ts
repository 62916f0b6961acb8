import { describe, expect, test } from 'vitest'
import { Analyzer, normalizeName, splitWords } from './analyze.js'

describe('splitWords', () => {
  test.each([
    ['issues/create', ['issues', 'create']],
    ['repos_get-content', ['repos', 'get', 'content']],
    ['filesystem.read_text_file', ['filesystem', 'read', 'text', 'file']],
    ['createIssue', ['create', 'issue']],
    ['HTTPServer', ['http', 'server']],
    ['getV2Token', ['get', 'v2', 'token']],
    ['API-post-search', ['api', 'post', 'search']],
    ['Größe ändernDatei', ['größe', 'ändern', 'datei']],
  ])('%s', (text, words) => {
    expect(splitWords(text)).toEqual(words)
  })

  test('the ASCII and Unicode paths split alike', () => {
    for (const text of ['createIssue', 'HTTPServer', 'a_b-c.d/e', 'XMLHttpRequest2Go']) {
      expect(splitWords(`${text} é`).slice(0, -1)).toEqual(splitWords(text))
    }
  })
})

describe('Analyzer', () => {
  test('stems, spells out short forms and drops stop words and numbers', () => {
    const analyzer = new Analyzer()
    expect(analyzer.terms('List the repos of my org')).toEqual(['list', 'repositori', 'my', 'organ'])
    expect(analyzer.terms('show issue #42')).toEqual(['show', 'issu'])
    expect(analyzer.terms('open a PR')).toEqual(['open', 'pull', 'request'])
  })

  test('joins two-word phrases', () => {
    expect(new Analyzer().terms('look up a user')).toEqual(['lookup', 'user'])
  })

  test('indexed text gets stable term ids; a request does not grow the vocabulary', () => {
    const analyzer = new Analyzer()
    const ids = analyzer.index('create an issue')
    expect(analyzer.index('issue created')).toEqual([ids[1], ids[0]])
    const size = analyzer.vocabularySize
    analyzer.terms('entirely unseen words')
    expect(analyzer.vocabularySize).toBe(size)
    expect(analyzer.idOf('unseen')).toBeUndefined()
  })
})

test('normalizeName ignores case and separators', () => {
  expect(normalizeName('Issues/Create-For_repo.x')).toBe('issuescreateforrepox')
})
