/**
 * Every TypeScript block of the documentation compiles (and the ones marked `run` run): see
 * `blocks.ts` for the info-string flags. Shell and other blocks are not compiled.
 */
import { spawn } from 'node:child_process'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { checkProgram } from '@ptc/bindings/check'
import { renderDeclarations } from '@ptc/bindings'
import { createShop, installShopPolicy, shopTools } from '@ptc/cli'
import { createPtcExecutor } from '@ptc/ptc'
import type { CodeRuntime } from '@ptc/sandbox'
import { createQuickJSRuntime } from '@ptc/sandbox-quickjs'
import { ToolsService, type ToolDefinition } from '@ptc/tools'
import { afterAll, describe, expect, test } from 'vitest'
import { documentationBlocks, extractBlocks, isTypeScript, programOf, type CodeBlock } from './blocks.js'
import { blockPath, typeCheckBlocks, type BlockDiagnostic } from './compile.js'

const ROOT = fileURLToPath(new URL('../..', import.meta.url))
const blocks = documentationBlocks(ROOT).filter(isTypeScript)
const label = (block: CodeBlock): string => `${block.file}:${block.line}`

/** `ts config` blocks use `defineConfig` from `@ptc/cli`, which may not be there yet. */
const cli = (await import('@ptc/cli')) as Record<string, unknown>
const CONFIG_SKIP = typeof cli['defineConfig'] === 'function' ? undefined : '@ptc/cli does not export defineConfig yet'
if (CONFIG_SKIP !== undefined) {
  for (const block of blocks.filter((b) => b.flags.has('config')))
    console.warn(`test/docs: skipped ${label(block)} (a \`ts config\` block): ${CONFIG_SKIP}`)
}

const hostBlocks = blocks.filter(
  (b) => programOf(b) === undefined && !(b.flags.has('config') && CONFIG_SKIP !== undefined),
)
const programBlocks = blocks.filter((b) => programOf(b) !== undefined)

/** A block that must not compile, checked with the others: proves a broken block fails with its file and line. */
const PROBE: CodeBlock = {
  file: 'docs/probe.md',
  line: 10,
  language: 'ts',
  flags: new Set(),
  code: "import { defineTool } from '@ptc/tools'\nconst n: number = defineTool\n",
}

let diagnostics: Map<CodeBlock, BlockDiagnostic[]> | undefined
/** One program for every host block: the packages' sources are checked once. */
function diagnosticsOf(block: CodeBlock): BlockDiagnostic[] {
  diagnostics ??= typeCheckBlocks(ROOT, [...hostBlocks, PROBE])
  return diagnostics.get(block) ?? []
}
const format = (list: readonly BlockDiagnostic[]): string =>
  list.map((d) => `${d.where}: TS${d.code}: ${d.message}`).join('\n')

describe('extracting blocks', () => {
  test('an indented fence inside a list item keeps its language, flags and line; other languages are kept apart', () => {
    const text = [
      '# t',
      '',
      '- item:',
      '',
      '  ```ts run',
      '  const a = 1',
      '    const b = 2',
      '  ```',
      '',
      '```sh',
      'ls',
      '```',
      '',
    ].join('\n')
    const blocks = extractBlocks('x.md', text)
    expect(blocks.map((b) => [b.line, b.language, [...b.flags], b.code])).toEqual([
      [5, 'ts', ['run'], 'const a = 1\n  const b = 2'],
      [10, 'sh', [], 'ls'],
    ])
  })

  test('an unclosed fence is an error naming the file and line', () => {
    expect(() => extractBlocks('x.md', 'a\n```ts\nconst a = 1\n')).toThrow('x.md:2: a code fence is never closed')
  })
})

test('a block that does not compile is reported with its markdown file, line and diagnostic', () => {
  expect(diagnosticsOf(PROBE)).toEqual([
    { where: 'docs/probe.md:12', code: 2322, message: expect.stringContaining("is not assignable to type 'number'") },
  ])
}, 120_000)

test('the documentation has TypeScript blocks in every package README and the guide', () => {
  const files = new Set(blocks.map((b) => b.file))
  for (const file of [
    'README.md',
    'docs/guide.md',
    'packages/tools/README.md',
    'packages/ptc/README.md',
    'sandbox/quickjs/README.md',
  ])
    expect(files).toContain(file)
})

describe('host code blocks type-check', () => {
  for (const block of blocks.filter((b) => programOf(b) === undefined)) {
    const skip = block.flags.has('config') ? CONFIG_SKIP : undefined
    test.skipIf(skip !== undefined)(
      `${label(block)}${skip === undefined ? '' : ` (skipped: ${skip})`}`,
      () => {
        const found = diagnosticsOf(block)
        if (found.length > 0) expect.fail(`${label(block)}: the block does not compile:\n${format(found)}`)
      },
      120_000,
    )
  }
})

/** The tools a program block is written against: the demo shop (what `ptc run` uses without `--tools`), or `test/docs/sdk/NAME.ts`. */
async function declarationsFor(sdk: string): Promise<string> {
  const definitions: readonly ToolDefinition[] =
    sdk === 'shop'
      ? shopTools({ shop: createShop() })
      : ((await import(`./sdk/${sdk}.ts`)) as { tools: ToolDefinition[] }).tools
  return renderDeclarations(
    definitions.map((t) => ({
      name: t.name,
      description: t.description,
      parameters: t.parameters,
      output: t.output.schema,
    })),
  )
}

describe('run_code program blocks type-check against their SDK', () => {
  for (const block of programBlocks) {
    const sdk = programOf(block)?.sdk ?? 'shop'
    test(`${label(block)} (SDK: ${sdk})`, async () => {
      const result = checkProgram(block.code, await declarationsFor(sdk))
      const where = (d: { line: number; source: string }): string =>
        d.source === 'program' ? `${block.file}:${block.line + d.line}` : `${d.source}:${d.line}`
      if (!result.ok)
        expect.fail(
          `${label(block)}: the program does not type-check:\n${result.diagnostics.map((d) => `${where(d)}: TS${d.code}: ${d.message}`).join('\n')}`,
        )
    })
  }
})

let runtime: CodeRuntime | undefined
afterAll(async () => {
  await runtime?.dispose()
})

describe('program blocks marked run succeed against the demo shop on QuickJS', () => {
  for (const block of programBlocks.filter((b) => b.flags.has('run'))) {
    test(label(block), async () => {
      runtime ??= createQuickJSRuntime({ poolSize: 1 })
      const shop = createShop()
      const tools = new ToolsService({ approval: { request: async () => 'allowed-once' } })
      for (const tool of shopTools({ shop })) tools.register(tool)
      installShopPolicy(tools, { shop })
      tools.setExecutor(createPtcExecutor({ runtime, mode: 'code' }))
      const args = JSON.stringify({ code: block.code, description: `docs ${label(block)}` })
      const batch = await tools.execute({
        calls: [{ type: 'tool_call', id: 'docs', name: 'run_code', arguments: args }],
        signal: new AbortController().signal,
      })
      const result = batch.results[0]?.result
      const text =
        result?.content.map((b) => (b.type === 'text' ? b.text : `[${b.mimeType}]`)).join('\n') ?? '(no result)'
      if (result === undefined || result.isError) expect.fail(`${label(block)}: the program failed:\n${text}`)
    }, 60_000)
  }
})

/** Runs a block file with Node and tsx (sources through the `@ptc/source` condition); resolves with its exit and output. */
function runFile(path: string): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--conditions=@ptc/source', '--import', 'tsx', path], {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let output = ''
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()))
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()))
    const timer = setTimeout(() => child.kill('SIGKILL'), 50_000)
    child.on('error', reject)
    child.on('close', (code) => {
      clearTimeout(timer)
      resolve({ code, output })
    })
  })
}

describe('host blocks marked run exit 0', () => {
  for (const block of hostBlocks.filter((b) => b.flags.has('run'))) {
    test(label(block), async () => {
      // Type-checking writes the block files; a block that does not compile is not run.
      const found = diagnosticsOf(block)
      if (found.length > 0) expect.fail(`${label(block)}: the block does not compile:\n${format(found)}`)
      const run = await runFile(blockPath(join(ROOT, 'node_modules/.cache/ptc-docs'), block))
      if (run.code !== 0) expect.fail(`${label(block)}: exit ${String(run.code)}:\n${run.output}`)
    }, 120_000)
  }
})
