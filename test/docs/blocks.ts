/**
 * The code blocks of the documentation: every fenced block of `README.md`, each package's README and
 * `docs/*.md`, with its language, its flags and where it starts.
 *
 * Info strings: ```` ```ts ```` is host code (a module, type-checked); ```` ```ts run ```` is also run;
 * ```` ```ts config ```` needs `defineConfig` from `@ptc/cli`; ```` ```ts program ```` is the body of a
 * `run_code` program, checked against the demo shop's SDK (```` ```ts program=NAME ```` against
 * the tools `test/docs/sdk/NAME.ts` exports) and with `run` also run against the demo shop on QuickJS.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { join, relative } from 'node:path'

export interface CodeBlock {
  /** The markdown file, relative to the root. */
  readonly file: string
  /** 1-based line of the opening fence. */
  readonly line: number
  /** The first word of the info string, lower case (`ts`, `sh`, …). */
  readonly language: string
  /** The other words: `run`, `config`, `program`, `program=NAME`. */
  readonly flags: ReadonlySet<string>
  /** The block's text, with the fence's indentation removed. */
  readonly code: string
}

/** Blocks whose language is TypeScript. */
export const isTypeScript = (block: CodeBlock): boolean => block.language === 'ts' || block.language === 'typescript'

/** `program` or `program=NAME`: the block is a `run_code` program; the value names its declarations. */
export function programOf(block: CodeBlock): { sdk: string } | undefined {
  for (const flag of block.flags) {
    if (flag === 'program') return { sdk: 'shop' }
    if (flag.startsWith('program=')) return { sdk: flag.slice('program='.length) }
  }
  return undefined
}

/** The documentation files: the README, each workspace package's README, `docs/*.md`. */
export function markdownFiles(root: string): string[] {
  const files = ['README.md']
  for (const parent of ['packages', 'sandbox']) {
    for (const entry of readdirSync(join(root, parent)).sort()) files.push(join(parent, entry, 'README.md'))
  }
  files.push('bindings/README.md')
  const docs = join(root, 'docs')
  if (existsSync(docs))
    for (const entry of readdirSync(docs).sort()) if (entry.endsWith('.md')) files.push(join('docs', entry))
  return files.filter((file) => existsSync(join(root, file))).map((file) => relative(root, join(root, file)))
}

const FENCE = /^( *)(`{3,}|~{3,})(.*)$/

/** Every fenced block of one markdown text. An unclosed fence is an error: it would hide the rest of the file. */
export function extractBlocks(file: string, text: string): CodeBlock[] {
  const lines = text.split('\n')
  const blocks: CodeBlock[] = []
  for (let i = 0; i < lines.length; i++) {
    const open = FENCE.exec(lines[i] as string)
    if (open === null) continue
    const [, indent = '', fence = '', info = ''] = open
    const words = info
      .trim()
      .split(/\s+/)
      .filter((w) => w !== '')
    const body: string[] = []
    let j = i + 1
    for (; j < lines.length; j++) {
      const line = lines[j] as string
      const close = FENCE.exec(line)
      if (
        close !== null &&
        close[2]?.[0] === fence[0] &&
        (close[2]?.length ?? 0) >= fence.length &&
        close[3]?.trim() === ''
      )
        break
      body.push(line.startsWith(indent) ? line.slice(indent.length) : line.trimStart())
    }
    if (j === lines.length) throw new Error(`${file}:${i + 1}: a code fence is never closed`)
    blocks.push({
      file,
      line: i + 1,
      language: (words[0] ?? '').toLowerCase(),
      flags: new Set(words.slice(1)),
      code: body.join('\n'),
    })
    i = j
  }
  return blocks
}

/** Every block of every documentation file. */
export function documentationBlocks(root: string): CodeBlock[] {
  return markdownFiles(root).flatMap((file) => extractBlocks(file, readFileSync(join(root, file), 'utf8')))
}
