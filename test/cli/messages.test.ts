/**
 * Every message the built `ptc` binary writes on stderr starts with exactly one
 * prefix: `ptc: `, or `ptc serve: ` for the MCP server's own messages.
 */
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { buildCli, ROOT } from './build.js'
import { ptc, tempDir, type CliOptions } from './cli.js'

const program = (name: string): string => join(ROOT, 'examples/shop/programs', `${name}.ts`)

const files = tempDir({
  'throws.js': 'await tools.list_orders({ limit: 1 })\nconsole.log("before")\nthrow new Error("no good")\n',
  'misuse.ts': 'const c = await tools.get_customer({ id: 1 })\nreturn c.nickname\n',
  'not-a-log.jsonl': 'this is not JSON\n',
  'partial.jsonl':
    '{"type":"tool/call","time":1,"callId":"c1","name":"t","arguments":"{}"}\nnot json\n{"type":"tool/ca',
})
afterAll(() => files.cleanup())
beforeAll(() => buildCli(), 120_000)

/** A message line: one prefix, and what follows is not another one (`ptc: ptc run: …`). */
const ONE_PREFIX = /^(ptc|ptc serve): (?!ptc( \w+)?: )\S/

/**
 * The messages of a run's stderr: its first block (a usage text may follow after a blank line), without the
 * indented lines under a message (the sub-call table, a failing benchmark's output).
 */
function messages(stderr: string): string[] {
  const [first = ''] = stderr.split('\n\n')
  return first.split('\n').filter((line) => line !== '' && !line.startsWith('  '))
}

const cases: [string, string[], CliOptions?][] = [
  ['an unknown command', ['fly']],
  ['help for an unknown command', ['help', 'fly']],
  ['ptc run without a file', ['run']],
  ['ptc run with an unknown option', ['run', program('low-stock'), '--colour']],
  ['ptc run with a missing file', ['run', files.path('nope.ts')]],
  ['ptc run with a bad limit', ['run', program('low-stock'), '--max-output', 'lots']],
  ['a program that throws', ['run', files.path('throws.js')]],
  ['a program that throws, --json', ['run', files.path('throws.js'), '--json']],
  ['a refund nobody approves', ['run', program('refund-damaged')]],
  ['ptc sdk with an argument', ['sdk', 'extra']],
  ['ptc check with type errors', ['check', files.path('misuse.ts')]],
  ['ptc log of a file that is not a log', ['log', files.path('not-a-log.jsonl')]],
  ['ptc log of a log with bad lines', ['log', files.path('partial.jsonl')]],
  ['ptc bench outside the repository', ['bench'], { cwd: files.dir }],
  ['ptc bench with an argument', ['bench', 'extra']],
  ['ptc bench --peers with an argument', ['bench', '--peers', 'extra']],
  ['ptc serve with an unknown option', ['serve', '--bogus']],
  ['ptc serve without an upstream', ['serve']],
]

describe('one prefix per message on stderr', () => {
  test.each(cases)('%s', async (_label, args, options) => {
    const run = await ptc(args, { killAfterMs: 30_000, ...options })
    expect(run.code).not.toBeNull()
    const lines = messages(run.stderr)
    expect(lines.length).toBeGreaterThan(0)
    for (const line of lines) expect(line).toMatch(ONE_PREFIX)
  })

  test('a usage error names the command whose help to read, after the one prefix', async () => {
    const run = await ptc(['log'])
    expect(run.stderr).toBe('ptc: missing session log file; see `ptc log --help`\n')
  })
})
