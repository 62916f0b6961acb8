/**
 * `ptc run` as a user runs it: the built binary in a child process, over the
 * built-in demo shop or a tools module, with every kind of bad input.
 */
import { spawn } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { isolatedVmAvailability } from '@ptc/sandbox-isolated-vm'
import { readJsonlSession } from '@ptc/tools/session'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { BIN, buildCli, ROOT } from './build.js'
import { hasScript, noStack, ptc, ptcOnTerminal, reason, tempDir } from './cli.js'

/** util-linux `script` gives the binary a pseudo-terminal. */

const program = (name: string): string => join(ROOT, 'examples/shop/programs', `${name}.ts`)
const fixture = (name: string): string => join(ROOT, 'test/cli/fixtures', name)

const files = tempDir({
  'throws.ts':
    'const orders = await tools.list_orders({ limit: 2 })\nconsole.log(`got ${orders.length}`)\nthrow new Error("no good order")',
  'syntax.ts': 'const = 1\nreturn 2',
  'loop.js': 'while (true) {}',
  'big.js': 'console.log("x".repeat(40000))\nreturn 1',
  'math.js':
    'const [x, y] = await Promise.all([tools.add({ a: 1, b: 2 }), tools.add({ a: 3, b: 4 })])\nreturn { sum: x + y }',
  'greet.ts': 'const g: { greeting: string } = await tools.greet({ name: "Ada" })\nreturn g.greeting',
  'failing-call.js':
    'try { await tools.shout({ word: "" }) } catch (e) { console.log("caught: " + e.message) }\nreturn await tools.shout({ word: "hi" })',
})
afterAll(() => files.cleanup())
beforeAll(() => buildCli(), 120_000)

describe('ptc run over the built-in demo shop', () => {
  test('prints the model text on stdout and the sub-calls and byte figures on stderr', async () => {
    const run = await ptc(['run', program('top-customers')])
    expect(run.code).toBe(0)
    expect(run.stdout).toMatch(/^Scanned \d+ orders from \d+ customers\.\n\[\n {2}\{\n {4}"customer": /)
    expect(run.stderr).toMatch(/^ptc: 7 sub-calls \(quickjs, run \d+ ms\)$/m)
    expect(run.stderr).toMatch(/^ {2}call_[0-9a-f]{8}:ptc:1 {2}list_orders +\d+ ms +[\d.]+ kB {2}ok$/m)
    const bytes = /stayed in the sandbox: (\d+); bytes that reached the model: (\d+)/.exec(run.stderr)
    expect(Number(bytes?.[1])).toBeGreaterThan(Number(bytes?.[2]))
    expect(Number(bytes?.[2])).toBe(Buffer.byteLength(run.stdout.trimEnd()))
  })

  test('--json prints one object with the value, logs, sub-calls and no error', async () => {
    const run = await ptc(['run', program('top-customers'), '--json'])
    expect(run.code).toBe(0)
    const report = JSON.parse(run.stdout) as Record<string, unknown>
    expect(Object.keys(report)).toEqual(expect.arrayContaining(['ok', 'text', 'value', 'logs', 'error', 'subCalls']))
    expect(report).toMatchObject({
      ok: true,
      error: null,
      logs: [expect.stringMatching(/^Scanned/)],
      sandbox: 'quickjs',
    })
    expect(report.value).toHaveLength(3)
    expect(report.subCalls).toHaveLength(7)
    expect((report.subCalls as unknown[])[0]).toEqual({
      id: expect.stringMatching(/^call_[0-9a-f]{8}:ptc:1$/),
      name: 'list_orders',
      isError: false,
      ms: expect.any(Number),
      bytes: expect.any(Number),
    })
    expect(run.stderr).toBe('')
  })

  test('reads the program from stdin with -', async () => {
    const run = await ptc(['run', '-', '--json'], {
      input: 'const c = await tools.get_customer({ id: "C001" })\nreturn c.name',
    })
    expect(run.code).toBe(0)
    expect(JSON.parse(run.stdout)).toMatchObject({ ok: true, text: 'Ada Lindqvist', value: 'Ada Lindqvist' })
  })

  test('a program that throws exits 1: the model text on stdout, the reason on stderr', async () => {
    const run = await ptc(['run', files.path('throws.ts')])
    expect(run.code).toBe(1)
    expect(run.stdout).toContain('Error: code run failed (exception): ')
    expect(run.stdout).toContain('Captured output:\ngot 2')
    expect(reason(run)).toMatch(/^ptc: the program failed \(exception\): .*no good order/)
    const json = JSON.parse((await ptc(['run', files.path('throws.ts'), '--json'])).stdout) as Record<string, unknown>
    expect(json).toMatchObject({
      ok: false,
      value: null,
      logs: ['got 2'],
      error: { kind: 'exception', message: expect.stringContaining('no good order') },
    })
  })

  test('a syntax error exits 1 with a one-line reason naming the position', async () => {
    const run = await ptc(['run', files.path('syntax.ts')])
    expect(run.code).toBe(1)
    expect(reason(run)).toMatch(/^ptc: the program failed \(syntax\): .*1/)
    expect(noStack(run.stderr)).toBe(true)
  })

  test('--timeout stops a program that never ends', async () => {
    const run = await ptc(['run', files.path('loop.js'), '--timeout', '300', '--json'])
    expect(run.code).toBe(1)
    expect(JSON.parse(run.stdout)).toMatchObject({ ok: false, error: { kind: 'timeout' } })
  })

  test('--cpu and --wall stop a program that never ends, each saying which limit it hit', async () => {
    const cpu = await ptc(['run', files.path('loop.js'), '--cpu', '300', '--json'])
    expect(JSON.parse(cpu.stdout)).toMatchObject({
      ok: false,
      error: { kind: 'timeout', message: expect.stringMatching(/cpu/i) },
    })
    const wall = await ptc(['run', files.path('loop.js'), '--wall', '300', '--json'])
    expect(JSON.parse(wall.stdout)).toMatchObject({
      ok: false,
      error: { kind: 'timeout', message: expect.stringMatching(/wall/i) },
    })
  })

  test('by default the output the model receives is cut at 32 KiB; --max-output raises or lowers it', async () => {
    const capped = await ptc(['run', files.path('big.js'), '--json'])
    expect(capped.code).toBe(1)
    expect(JSON.parse(capped.stdout)).toMatchObject({ ok: false, error: { kind: 'output-limit' } })
    const raised = await ptc(['run', files.path('big.js'), '--max-output', '65536', '--json'])
    expect(raised.code).toBe(0)
    expect(JSON.parse(raised.stdout)).toMatchObject({ ok: true, value: 1 })
    const lowered = await ptc(['run', program('top-customers'), '--max-output', '100', '--json'])
    expect(JSON.parse(lowered.stdout)).toMatchObject({ ok: false, error: { kind: 'output-limit' } })
  })

  test('--max-sub-calls ends a run that calls more tools than that', async () => {
    const run = await ptc(['run', program('top-customers'), '--max-sub-calls', '2', '--json'])
    expect(run.code).toBe(1)
    const report = JSON.parse(run.stdout) as { error: { kind: string }; subCalls: unknown[] }
    expect(report.error.kind).toBe('limit')
    expect(report.subCalls.length).toBeLessThanOrEqual(2)
  })

  test('--memory and --max-parallel are accepted', async () => {
    const run = await ptc(['run', program('low-stock'), '--memory', '64', '--max-parallel', '1', '--json'])
    expect(run.code).toBe(0)
    expect(JSON.parse(run.stdout)).toMatchObject({ ok: true })
  })

  test('a refund asks for approval: --approve yes allows it, and without an answer it is rejected', async () => {
    const yes = await ptc(['run', program('refund-damaged'), '--approve', 'yes', '--json'])
    expect(yes.code).toBe(0)
    expect(yes.stderr).toMatch(/^ptc: approved issue_refund \(call_[0-9a-f]{8}:ptc:\d+\): Refund €/m)
    const report = JSON.parse(yes.stdout) as { subCalls: { name: string; isError: boolean }[] }
    expect(report.subCalls.at(-1)).toMatchObject({ name: 'issue_refund', isError: false })
    const unanswered = await ptc(['run', program('refund-damaged')])
    expect(unanswered.code).toBe(1)
    expect(unanswered.stderr).toMatch(/rejected issue_refund .*pass --approve yes/)
    expect(unanswered.stderr).toMatch(/issue_refund +\d+ ms .* error DENIED/)
  })

  test.runIf(hasScript())('--approve ask prompts on the terminal and follows the answer', async () => {
    const yes = await ptcOnTerminal(['run', program('refund-damaged'), '--approve', 'ask'], 'y\n', { NO_COLOR: '1' })
    expect(yes.code).toBe(0)
    expect(yes.stdout).toMatch(
      /ptc: approve issue_refund \(call_[0-9a-f]{8}:ptc:8\): Refund €[\d.]+ on order O-\d+\? \[y\/N\]/,
    )
    expect(yes.stdout).toMatch(/issue_refund +\d+ ms +\d+ B {2}ok/)
    const no = await ptcOnTerminal(['run', program('refund-damaged'), '--approve', 'ask'], 'n\n', { NO_COLOR: '1' })
    expect(no.code).toBe(1)
    expect(no.stdout).toMatch(/issue_refund +\d+ ms +\d+ B {2}error DENIED: the user, at the prompt rejected this call/)
  })

  test('--approve ask needs a terminal', async () => {
    const run = await ptc(['run', program('refund-damaged'), '--approve', 'ask'])
    expect(run.code).toBe(2)
    expect(run.stderr).toBe(
      'ptc: --approve ask needs to prompt on a terminal, but stdin is not a terminal; use --approve yes or --approve no\n',
    )
  })

  test('--session appends the events to a JSON Lines file that ptc log reads back', async () => {
    const dir = tempDir()
    try {
      const session = dir.path('session.jsonl')
      expect((await ptc(['run', program('top-customers'), '--session', session])).code).toBe(0)
      expect((await ptc(['run', program('low-stock'), '--session', session])).code).toBe(0)
      const events = readFileSync(session, 'utf8')
        .trimEnd()
        .split('\n')
        .map((line) => JSON.parse(line) as { type: string })
      expect(events.filter((e) => e.type === 'tool/call')).toHaveLength(2)
      expect(events.filter((e) => e.type === 'tool/ptc-dispatch-start').length).toBe(
        events.filter((e) => e.type === 'tool/ptc-dispatch').length,
      )
      const log = await ptc(['log', session])
      expect(log.code).toBe(0)
      const lines = log.stdout.split('\n')
      expect(lines[0]).toMatch(
        /^run_code call_[0-9a-f]{8} \[turn 1, step 1\] "Top 3 customers by 2026 spend, with their latest order" — \d+ ms — ok \([\d.]+ kB\): Scanned/,
      )
      expect(lines[1]).toMatch(
        /^ {2}├─ call_\w+:ptc:1 list_orders\(\{"since":"2026-01-01","limit":200\}\) — \d+ ms — ok \([\d.]+ kB\): \d+ order\(s\)/,
      )
      expect(lines[7]).toMatch(/^ {2}└─ call_\w+:ptc:7 get_order\(\{"id":"O-\d+"\}\) — \d+ ms — ok/)
      expect(lines[8]).toMatch(
        /^ {5}7 sub-call\(s\); [\d.]+ kB of tool results stayed in the sandbox, [\d.]+ kB reached the model$/,
      )
      expect(lines[9]).toMatch(
        /^run_code call_[0-9a-f]{8} \[turn 1, step 1\] "Products at or below their reorder level, per category"/,
      )
      const json = JSON.parse((await ptc(['log', session, '--json'])).stdout) as {
        calls: { description: string; subCalls: unknown[] }[]
      }
      expect(json.calls.map((c) => [c.description, c.subCalls.length])).toEqual([
        ['Top 3 customers by 2026 spend, with their latest order', 7],
        ['Products at or below their reorder level, per category', 5],
      ])
    } finally {
      dir.cleanup()
    }
  })
})

describe('ptc run with a tools module', () => {
  test('a JavaScript module with named exports', async () => {
    const run = await ptc(['run', files.path('math.js'), '--tools', fixture('tools.mjs'), '--json'])
    expect(run.code).toBe(0)
    expect(JSON.parse(run.stdout)).toMatchObject({
      ok: true,
      value: { sum: 10 },
      subCalls: [{ name: 'add' }, { name: 'add' }],
    })
  })

  test('a TypeScript module with a default array, loaded through tsx', async () => {
    const run = await ptc(['run', files.path('greet.ts'), '--tools', fixture('tools.ts')])
    expect(run.code).toBe(0)
    expect(run.stdout).toBe('Hello, Ada!\n')
  })

  test('the byte summary never shows a share above 100%: when the program’s text outgrows the tool results it says so', async () => {
    // add returns "3" and "7" (2 bytes); the program returns { sum: 10 }, which the model reads as indented JSON.
    const run = await ptc(['run', files.path('math.js'), '--tools', fixture('tools.mjs')])
    expect(run.code).toBe(0)
    const line = run.stderr.split('\n').find((l) => l.startsWith('ptc: bytes of tool results')) ?? ''
    const toModel = Buffer.byteLength(run.stdout.trimEnd())
    expect(line).toBe(
      `ptc: bytes of tool results that stayed in the sandbox: 2; bytes that reached the model: ${toModel} (${toModel - 2} more than the tools returned: the model reads what the program logged and returned (a value as indented JSON), the program's own text, not a share of the tool results)`,
    )
    expect(line).not.toMatch(/\d%/)
  })

  test('a failing tool call fails that call only', async () => {
    const run = await ptc(['run', files.path('failing-call.js'), '--tools', fixture('tools.mjs'), '--json'])
    expect(run.code).toBe(0)
    expect(JSON.parse(run.stdout)).toMatchObject({
      text: 'caught: nothing to shout\nHI',
      subCalls: [
        { name: 'shout', isError: true },
        { name: 'shout', isError: false },
      ],
    })
  })
})

describe.runIf(isolatedVmAvailability().available)('ptc run --sandbox isolated-vm', () => {
  test('restarts node with --no-node-snapshot and runs the program', async () => {
    const run = await ptc(['run', program('top-customers'), '--sandbox', 'isolated-vm', '--json'])
    expect(run.code, `${run.stderr}\n${run.stdout}`).toBe(0)
    expect(JSON.parse(run.stdout)).toMatchObject({ ok: true, sandbox: 'isolated-vm' })
  })
})

describe('bad input: one line on stderr, exit 2, no stack trace', () => {
  const cases: [string, () => string[], RegExp][] = [
    [
      'a missing program file',
      () => ['run', files.path('nope.ts')],
      /^ptc: cannot read program .*nope\.ts: no such file$/,
    ],
    ['no program file at all', () => ['run'], /^ptc: missing program file \(or - for stdin\); see `ptc run --help`$/],
    [
      'a tools module that throws on import',
      () => ['run', program('low-stock'), '--tools', fixture('tools-throws.mjs')],
      /^ptc: tools module .*tools-throws\.mjs failed to load: the tools database is unreachable \((thrown at [^;]+; )?set PTC_DEBUG=1 for its stack\)$/,
    ],
    [
      'a tools module exporting something that is not a tool',
      () => ['run', program('low-stock'), '--tools', fixture('tools-not-a-tool.mjs')],
      /^ptc: tools module .*: export "settings" is not a tool \(no name\)/,
    ],
    [
      'a tools module without tools',
      () => ['sdk', '--tools', fixture('tools-empty.mjs')],
      /^ptc: tools module .* exports no tools/,
    ],
    [
      'a tools module that does not exist',
      () => ['run', program('low-stock'), '--tools', './missing-tools.js'],
      /^ptc: tools module \.\/missing-tools\.js not found$/,
    ],
    [
      'an unknown option',
      () => ['run', program('low-stock'), '--colour'],
      /^ptc: Unknown option '--colour'; see `ptc run --help`$/,
    ],
    [
      'a non-numeric limit',
      () => ['run', program('low-stock'), '--timeout', 'soon'],
      /^ptc: --timeout must be a positive whole number of milliseconds, not "soon"$/,
    ],
    [
      'a zero memory limit',
      () => ['run', program('low-stock'), '--memory', '0'],
      /^ptc: --memory must be a positive whole number of megabytes/,
    ],
    [
      'an unknown sandbox',
      () => ['run', program('low-stock'), '--sandbox', 'v8'],
      /^ptc: --sandbox must be one of quickjs, isolated-vm, not "v8"$/,
    ],
    [
      'an unknown command',
      () => ['fly'],
      /^ptc: unknown command "fly"; one of run, resume, sdk, check, log, bench, serve/,
    ],
  ]
  test.each(cases)('%s', async (_label, args, expected) => {
    const run = await ptc(args())
    expect(run.code).toBe(2)
    expect(run.stdout).toBe('')
    expect(run.stderr.trimEnd().split('\n')).toHaveLength(1)
    expect(run.stderr.trimEnd()).toMatch(expected)
    expect(noStack(run.stderr)).toBe(true)
  })

  test('a session file in a folder that does not exist: exit 2 and no file created', async () => {
    const dir = tempDir()
    try {
      const session = join(dir.dir, 'missing', 'session.jsonl')
      const run = await ptc(['run', program('low-stock'), '--session', session])
      expect(run.code).toBe(2)
      expect(run.stderr).toMatch(/^ptc: cannot open session file .*session\.jsonl: folder .*missing does not exist\n$/)
      expect(existsSync(join(dir.dir, 'missing'))).toBe(false)
    } finally {
      dir.cleanup()
    }
  })

  test('a broken tools module never creates the session file', async () => {
    const dir = tempDir()
    try {
      const run = await ptc([
        'run',
        program('low-stock'),
        '--tools',
        fixture('tools-throws.mjs'),
        '--session',
        dir.path('s.jsonl'),
      ])
      expect(run.code).toBe(2)
      expect(existsSync(dir.path('s.jsonl'))).toBe(false)
    } finally {
      dir.cleanup()
    }
  })
})

describe('ptc run stopped by a signal', () => {
  test('SIGTERM ends a waiting run as Ctrl-C does: aborted, reported, its session log written whole', async () => {
    const dir = tempDir({ 'forever.js': 'await tools.sleep({ ms: 60000 })\nreturn "never"\n' })
    try {
      const log = dir.path('session.jsonl')
      const child = spawn(
        process.execPath,
        [BIN, 'run', dir.path('forever.js'), '--tools', fixture('tools-slow.mjs'), '--session', log],
        {
          cwd: ROOT,
          env: { ...process.env, NODE_OPTIONS: '' },
          stdio: ['ignore', 'pipe', 'pipe'],
        },
      )
      let stdout = ''
      let stderr = ''
      child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk))
      child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk))
      const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((done) =>
        child.once('close', (code, signal) => done({ code, signal })),
      )
      const started = (): boolean => existsSync(log) && readFileSync(log, 'utf8').includes('"tool/ptc-dispatch-start"')
      for (const end = Date.now() + 30_000; !started(); await new Promise((r) => setTimeout(r, 25))) {
        if (Date.now() > end) {
          child.kill('SIGKILL')
          throw new Error(`the run did not start its call: ${stderr}`)
        }
      }
      child.kill('SIGTERM')
      expect(await exited).toEqual({ code: 1, signal: null })
      expect(stdout).toContain('Error: code run failed (abort)')
      expect(noStack(stderr)).toBe(true)
      const read = await readJsonlSession(log)
      expect(read.partialTail).toBeUndefined()
      expect(read.events.map((event) => event.type)).toContain('tool/ptc-dispatch')
    } finally {
      dir.cleanup()
    }
  }, 60_000)
})
