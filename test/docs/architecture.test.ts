/**
 * ARCHITECTURE.md stays a map a newcomer can trust: small enough to read, every path in it exists, and its file
 * map names every source file exactly once. When files move, the failures list what to change.
 *
 * The format this test reads:
 * - Outside the file map, a backticked span containing `/` is a path relative to the root and must exist, unless
 *   it is a package name (`@ptc/sandbox/session`), an event name (`tools/pre-execute`, `tool/ptc-dispatch`), or has
 *   spaces or `<…>` in it (code, placeholders). Braces list alternatives: `a/{b,c}.ts` is `a/b.ts` and `a/c.ts`.
 * - The file map is the `##` section whose heading contains "File map". Each `###` heading names one source folder
 *   in its first backticked span (`packages/tools/src`). Each list item under it starts with backticked paths
 *   relative to that folder, separated by commas and ended by `:` or the item's end; an item may go on over
 *   indented lines. In the file map only the headings and these leading spans are paths: backticked words in the
 *   description after them are not.
 * - Source files: the `.ts` files under `packages/<name>/src`, `sandbox/<name>/src` and `bindings/src` that git
 *   tracks or would track (not ignored), except `*.test.ts` and `*.test-d.ts`.
 */
import { execFileSync } from 'node:child_process'
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, test } from 'vitest'

const ROOT = fileURLToPath(new URL('../..', import.meta.url))
const FILE = 'ARCHITECTURE.md'
const MAX_BYTES = 12_288
const text = readFileSync(join(ROOT, FILE), 'utf8')

/** `a/{b,c/{d,e}}.ts` -> `a/b.ts`, `a/c/d.ts`, `a/c/e.ts`. */
function expandBraces(pattern: string): string[] {
  const open = pattern.indexOf('{')
  if (open === -1) return [pattern]
  let depth = 0
  const cuts: number[] = []
  let close = -1
  for (let i = open; i < pattern.length && close === -1; i++) {
    const c = pattern[i]
    if (c === '{') depth++
    else if (c === '}' && --depth === 0) close = i
    else if (c === ',' && depth === 1) cuts.push(i)
  }
  if (close === -1) throw new Error(`unbalanced braces in \`${pattern}\``)
  const bounds = [open, ...cuts, close]
  const head = pattern.slice(0, open)
  const tail = pattern.slice(close + 1)
  return bounds.slice(0, -1).flatMap((start, k) => expandBraces(head + pattern.slice(start + 1, bounds[k + 1]) + tail))
}

/** Whether a backticked span outside the file map's leading positions is a repository path. */
function isPathSpan(span: string): boolean {
  if (!span.includes('/') || /[\s<>]/.test(span) || span.startsWith('@')) return false
  return !/^tools?\//.test(span)
}

interface FileMap {
  /** Each map entry, expanded and relative to the root, with the line it is on. */
  readonly entries: readonly { readonly path: string; readonly line: number }[]
  /** The `###` folders, relative to the root. */
  readonly folders: readonly string[]
  /** Items or headings the test could not read. */
  readonly problems: readonly string[]
}

function readFileMap(markdown: string): FileMap {
  const lines = markdown.split('\n')
  const start = lines.findIndex((l) => /^## .*File map/.test(l))
  if (start === -1) return { entries: [], folders: [], problems: [`${FILE} has no "## … File map" section`] }
  const end = lines.findIndex((l, i) => i > start && /^## /.test(l))
  const entries: { path: string; line: number }[] = []
  const folders: string[] = []
  const problems: string[] = []
  let folder: string | undefined
  for (let i = start + 1; i < (end === -1 ? lines.length : end); i++) {
    const line = lines[i] as string
    if (line.startsWith('### ')) {
      folder = /`([^`]+)`/.exec(line)?.[1]
      if (folder === undefined) problems.push(`${FILE}:${i + 1}: a ### heading without a backticked folder`)
      else folders.push(folder)
      continue
    }
    if (!line.startsWith('- ')) continue
    let item = line.slice(2)
    while (i + 1 < lines.length && /^ {2,}\S/.test(lines[i + 1] as string)) item += ` ${(lines[++i] as string).trim()}`
    if (folder === undefined) {
      problems.push(`${FILE}:${i + 1}: a list item before the first ### folder heading`)
      continue
    }
    let rest = item
    let found = 0
    for (let span = /^`([^`]+)`/.exec(rest); span !== null; span = /^`([^`]+)`/.exec(rest)) {
      for (const path of expandBraces(span[1] as string)) entries.push({ path: `${folder}/${path}`, line: i + 1 })
      found++
      rest = rest.slice(span[0].length).replace(/^,\s*/, '')
    }
    if (found === 0) problems.push(`${FILE}:${i + 1}: a file map item that does not start with a backticked path`)
  }
  return { entries, folders, problems }
}

/** Every backticked path outside the file map, expanded, with its line. */
function pathsOutsideMap(markdown: string): { path: string; line: number }[] {
  const out: { path: string; line: number }[] = []
  const lines = markdown.split('\n')
  let fenced = false
  let inMap = false
  lines.forEach((line, i) => {
    if (/^## /.test(line)) inMap = /File map/.test(line)
    if (/^\s*(```|~~~)/.test(line)) fenced = !fenced
    if (fenced || inMap) return
    for (const [, span] of line.matchAll(/`([^`]+)`/g)) {
      if (span !== undefined && isPathSpan(span)) for (const path of expandBraces(span)) out.push({ path, line: i + 1 })
    }
  })
  return out
}

/** The source files the map must name: git's view (tracked, or new and not ignored), else the folders' contents. */
function sourceFiles(): string[] {
  const isSource = (path: string): boolean =>
    /^(packages\/[^/]+\/src|sandbox\/[^/]+\/src|bindings\/src)\/.+\.ts$/.test(path) && !/\.test(-d)?\.ts$/.test(path)
  let listed: string[]
  try {
    const out = execFileSync(
      'git',
      ['ls-files', '-z', '--cached', '--others', '--exclude-standard', '--', 'packages', 'sandbox', 'bindings'],
      { cwd: ROOT, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 },
    )
    listed = out.split('\0').filter((p) => p !== '')
  } catch {
    listed = []
    const walk = (dir: string): void => {
      for (const entry of readdirSync(join(ROOT, dir), { withFileTypes: true })) {
        if (entry.name === 'node_modules' || entry.name === 'dist') continue
        const path = `${dir}/${entry.name}`
        if (entry.isDirectory()) walk(path)
        else listed.push(path)
      }
    }
    for (const top of ['packages', 'sandbox', 'bindings']) walk(top)
  }
  return [...new Set(listed.filter((p) => isSource(p) && existsSync(join(ROOT, p))))].sort()
}

const isFile = (path: string): boolean => existsSync(join(ROOT, path)) && statSync(join(ROOT, path)).isFile()

describe('expanding braces', () => {
  test('lists every alternative, nested groups included', () => {
    expect(expandBraces('a/{b,c/{d,e}}.ts')).toEqual(['a/b.ts', 'a/c/d.ts', 'a/c/e.ts'])
    expect(expandBraces('{x,y}/{p,q}.ts')).toEqual(['x/p.ts', 'x/q.ts', 'y/p.ts', 'y/q.ts'])
    expect(expandBraces('plain.ts')).toEqual(['plain.ts'])
  })
})

test('a file map is read: folders, brace groups, several paths, continued items; description spans are not paths', () => {
  const sample = [
    '## 3. File map',
    '',
    '### `pkg/src`',
    '',
    '- `{index,errors}.ts`, `a/b.ts`: the entry (`not/a-path.ts` is a description).',
    '- `c/{d,e/{f,g}}.ts`,',
    '  `h.ts`: continued.',
    '',
    '## 4. Glossary',
    '- `ignored.ts`: after the map.',
  ].join('\n')
  const map = readFileMap(sample)
  expect(map.problems).toEqual([])
  expect(map.folders).toEqual(['pkg/src'])
  expect(map.entries.map((e) => e.path)).toEqual([
    'pkg/src/index.ts',
    'pkg/src/errors.ts',
    'pkg/src/a/b.ts',
    'pkg/src/c/d.ts',
    'pkg/src/c/e/f.ts',
    'pkg/src/c/e/g.ts',
    'pkg/src/h.ts',
  ])
  expect(pathsOutsideMap(sample).map((p) => p.path)).toEqual([])
  expect(
    pathsOutsideMap('See `docs/x.md`, `tools/pre-execute`, `@ptc/a/b` and `<id>:ptc:<n>`.').map((p) => p.path),
  ).toEqual(['docs/x.md'])
})

describe(FILE, () => {
  const map = readFileMap(text)

  test(`is at most ${MAX_BYTES} bytes`, () => {
    const bytes = Buffer.byteLength(text)
    if (bytes > MAX_BYTES)
      expect.fail(`${FILE} has ${bytes} bytes, over ${MAX_BYTES}: shorten it, or move detail to docs/`)
  })

  test('has a file map the test can read', () => {
    expect(map.problems).toEqual([])
    expect(map.folders.length).toBeGreaterThan(0)
  })

  test('names only paths that exist', () => {
    const missing = [
      ...map.folders.filter((f) => !existsSync(join(ROOT, f))).map((f) => `${f} (a file map folder)`),
      ...map.entries.filter((e) => !isFile(e.path)).map((e) => `${e.path} (file map, line ${e.line})`),
      ...pathsOutsideMap(text)
        .filter((p) => !existsSync(join(ROOT, p.path)))
        .map((p) => `${p.path} (line ${p.line})`),
    ]
    if (missing.length > 0) expect.fail(`${FILE} names paths that do not exist:\n  ${missing.join('\n  ')}`)
  })

  test('names every source file once in its file map', () => {
    const named = new Map<string, number>()
    for (const { path } of map.entries) named.set(path, (named.get(path) ?? 0) + 1)
    const unnamed = sourceFiles().filter((p) => !named.has(p))
    const twice = [...named].filter(([, n]) => n > 1).map(([p]) => p)
    const problems = [...unnamed.map((p) => `not named: ${p}`), ...twice.map((p) => `named more than once: ${p}`)]
    if (problems.length > 0) expect.fail(`${FILE}'s file map is out of date:\n  ${problems.join('\n  ')}`)
  })

  test('lists each package source folder under a heading', () => {
    const sourceRoots = new Set(
      sourceFiles().map((p) =>
        p
          .split('/')
          .slice(0, p.startsWith('bindings/') ? 2 : 3)
          .join('/'),
      ),
    )
    const unlisted = [...sourceRoots].filter((root) => !map.folders.includes(root))
    expect(unlisted).toEqual([])
  })
})
