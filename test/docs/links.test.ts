/**
 * The documentation's relative links resolve: the file or folder exists, and a `#fragment` names a heading of the
 * target (GitHub's anchors). The guides' repository paths in backticks (`bench/RESULTS.md`) exist too, so a file
 * that moves shows up here.
 */
import { existsSync, readFileSync, statSync } from 'node:fs'
import { dirname, join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import { expect, test } from 'vitest'
import { markdownFiles } from './blocks.js'

const ROOT = fileURLToPath(new URL('../..', import.meta.url))
const FILES = [...markdownFiles(ROOT), 'ARCHITECTURE.md', 'CONTRIBUTING.md'].filter((f) => existsSync(join(ROOT, f)))
/** Top-level folders whose paths the README and the guides name in backticks. */
const CHECKED_ROOTS = ['packages', 'sandbox', 'bindings', 'test', 'bench', 'docs', 'examples', 'scripts', '.ci']

/** The lines of a markdown text outside fenced code blocks, with their 1-based numbers. */
function proseLines(text: string): { line: string; number: number }[] {
  const out: { line: string; number: number }[] = []
  let fence: string | undefined
  text.split('\n').forEach((line, i) => {
    const marker = /^\s*(`{3,}|~{3,})/.exec(line)?.[1]
    if (marker !== undefined && (fence === undefined || marker.startsWith(fence))) {
      fence = fence === undefined ? marker : undefined
      return
    }
    if (fence === undefined) out.push({ line, number: i + 1 })
  })
  return out
}

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces as hyphens; repeats get `-1`, `-2`, … */
function anchors(text: string): Set<string> {
  const seen = new Map<string, number>()
  const out = new Set<string>()
  for (const { line } of proseLines(text)) {
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line)?.[1]
    if (heading === undefined) continue
    const slug = heading
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-')
    const n = seen.get(slug) ?? 0
    seen.set(slug, n + 1)
    out.add(n === 0 ? slug : `${slug}-${n}`)
  }
  return out
}

test('anchors follow GitHub: punctuation and backticks dropped, spaces as hyphens', () => {
  expect([...anchors('# A\n## 7. The event log\n## The `ptc` command\n```sh\n# not a heading\n```\n## A')]).toEqual([
    'a',
    '7-the-event-log',
    'the-ptc-command',
    'a-1',
  ])
})

test.each(FILES)('%s: relative links resolve, anchors included', (file) => {
  const text = readFileSync(join(ROOT, file), 'utf8')
  const broken: string[] = []
  for (const { line, number } of proseLines(text)) {
    for (const [, target] of line.replace(/`[^`]*`/g, '').matchAll(/\]\(([^)\s]+)\)/g)) {
      if (target === undefined || /^[a-z]+:/i.test(target)) continue
      const [path = '', fragment] = target.split('#')
      const resolved = path === '' ? join(ROOT, file) : join(ROOT, dirname(file), path)
      if (!existsSync(resolved)) broken.push(`${file}:${number}: ${target} (no ${relative(ROOT, resolved)})`)
      else if (
        fragment !== undefined &&
        statSync(resolved).isFile() &&
        !anchors(readFileSync(resolved, 'utf8')).has(fragment)
      )
        broken.push(`${file}:${number}: ${target} (no heading #${fragment} in ${relative(ROOT, resolved)})`)
    }
  }
  expect(broken).toEqual([])
})

test.each(FILES.filter((f) => f === 'README.md' || f === 'CONTRIBUTING.md' || f.startsWith('docs/')))(
  '%s: the repository paths it names exist',
  (file) => {
    const missing: string[] = []
    for (const { line, number } of proseLines(readFileSync(join(ROOT, file), 'utf8'))) {
      for (const [, span] of line.matchAll(/`([^`]+)`/g)) {
        if (
          span === undefined ||
          /[\s*{}<>…]/.test(span) ||
          !CHECKED_ROOTS.includes(span.split('/')[0] ?? '') ||
          !span.includes('/')
        )
          continue
        if (!existsSync(join(ROOT, span))) missing.push(`${file}:${number}: ${span}`)
      }
    }
    expect(missing).toEqual([])
  },
)
