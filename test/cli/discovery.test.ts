/** Tool search from the command line: a program's searches are sub-calls that `ptc log` shows under it. */
import { writeFileSync } from 'node:fs'
import { beforeAll, expect, test } from 'vitest'
import { buildCli } from './build.js'
import { ptc, tempDir } from './cli.js'

beforeAll(() => buildCli(), 120_000)

test('a program that searches the demo shop, then calls what it found, is logged with its searches', async () => {
  const dir = tempDir()
  try {
    const program = dir.path('search.js')
    writeFileSync(
      program,
      [
        "const { tools: found } = await tools.search_tools({ query: 'find products in stock', limit: 1 })",
        'const hits = await tools[found[0].name]({ inStockOnly: true })',
        'return { tool: found[0].name, products: hits.length }',
      ].join('\n'),
    )
    const session = dir.path('session.jsonl')
    const run = await ptc(['run', program, '--session', session])
    expect(run.code).toBe(0)
    expect(run.stdout).toMatch(/"tool": "search_products"/)
    const log = await ptc(['log', session])
    const lines = log.stdout.split('\n')
    expect(lines[1]).toMatch(
      /^ {2}├─ call_\w+:ptc:1 search_tools\(\{"query":"find products in stock","limit":1\}\) — \d+ ms — ok/,
    )
    expect(lines[2]).toMatch(/^ {2}└─ call_\w+:ptc:2 search_products\(\{"inStockOnly":true\}\) — \d+ ms — ok/)
  } finally {
    dir.cleanup()
  }
})
