/**
 * The CLI against hostile input, as the built binary in a child process:
 * terminal control sequences in programs, tool results, tool names, error
 * messages and session logs never reach stderr (or `ptc log`) raw, and paths
 * that are not regular files or are too large end at once with exit 2.
 */
import { execFileSync } from 'node:child_process'
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { buildCli, ROOT } from './build.js'
import { hasScript, noStack, ptc, ptcOnTerminal, reason, tempDir, type CliOptions } from './cli.js'

/** ESC [ 31m (colour), OSC 0;title BEL (window title), C1 CSI (U+009B), U+202E (right-to-left override). */
const HOSTILE = '\x1b[31mred\x1b]0;title\x07 \u009b2J \u202eevil'
const ESCAPED = '\\x1b[31mred\\x1b]0;title\\x07 \\x9b2J \\u202eevil'

/** A byte a terminal acts on: C0 except \n and \t, DEL, C1 controls, lone surrogates (as U+FFFD they are harmless, as text not), bidi controls. */
// eslint-disable-next-line no-control-regex -- finding raw control characters is the point
const RAW_CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/u

/** What a hang costs at most: the child is killed and the test fails instead of the suite hanging. */
const quick: CliOptions = { killAfterMs: 15_000 }
const HANG_TEST_MS = 25_000

function expectNoRawControl(text: string): void {
  const found = RAW_CONTROL.exec(text)
  expect(
    found === null
      ? null
      : `U+${found[0].charCodeAt(0).toString(16).padStart(4, '0')} at ${found.index}: ${JSON.stringify(text.slice(Math.max(0, found.index - 40), found.index + 40))}`,
  ).toBeNull()
}

const fixture = (name: string): string => join(ROOT, 'test/cli/fixtures', name)

const files = tempDir({
  'syntax.js': `let a = 1\nlet b = ${HOSTILE}\n`,
  'throws.js': `console.log(${JSON.stringify(`log ${HOSTILE}`)})\nthrow new Error(${JSON.stringify(`boom ${HOSTILE}`)})\n`,
  'tool-error.js': `const c = await tools.get_customer({ id: ${JSON.stringify(`C${HOSTILE}`)} })\nreturn c\n`,
  'hostile-tools.js': `console.log(${JSON.stringify(`log ${HOSTILE}`)})\nconst echoed = await tools[${JSON.stringify(`echo${HOSTILE}`)}]({ text: ${JSON.stringify(`result ${HOSTILE}`)} })\nreturn echoed + await tools.fail({})\n`,
  'described.js': `// @description ${HOSTILE}\nreturn 1\n`,
  'check.ts': `const x: "a" = ${JSON.stringify(HOSTILE)}\n`,
  'ok.js': 'return 1\n',
})
afterAll(() => files.cleanup())
beforeAll(() => {
  buildCli()
  execFileSync('mkfifo', [files.path('fifo')])
  mkdirSync(files.path('folder'))
}, 120_000)

describe('control characters from a program, a tool or a log are escaped on stderr', () => {
  test('a syntax error quoting ESC: the escaped form on stderr, no raw control byte', async () => {
    const run = await ptc(['run', files.path('syntax.js')], quick)
    expect(run.code).toBe(1)
    expect(reason(run)).toMatch(/^ptc: the program failed \(syntax\): .*\\x1b/)
    expectNoRawControl(run.stderr)
    expect(noStack(run.stderr)).toBe(true)
  })

  test('a thrown exception message: escaped on stderr, with and without --json', async () => {
    const run = await ptc(['run', files.path('throws.js')], quick)
    expect(run.code).toBe(1)
    expect(reason(run)).toContain(`boom ${ESCAPED}`)
    expectNoRawControl(run.stderr)
    const json = await ptc(['run', files.path('throws.js'), '--json'], quick)
    expect(json.code).toBe(1)
    expect(json.stderr).toContain(`boom ${ESCAPED}`)
    expectNoRawControl(json.stderr)
  })

  test('piped, the model text on stdout is byte-exact (console.log and the exception message included)', async () => {
    const run = await ptc(['run', files.path('throws.js')], quick)
    expect(run.stdout).toContain(`Captured output:\nlog ${HOSTILE}\n`)
    expect(run.stdout).toContain(`boom ${HOSTILE}`)
  })

  test('--json is the same value with every control and bidi character as a \\u escape', async () => {
    const run = await ptc(['run', files.path('throws.js'), '--json'], quick)
    expectNoRawControl(run.stdout)
    expect(run.stdout).toContain('\\u009b2J \\u202eevil')
    const report = JSON.parse(run.stdout) as { logs: string[]; text: string }
    expect(report.logs).toEqual([`log ${HOSTILE}`])
    expect(report.text).toContain(`boom ${HOSTILE}`)
  })

  test('a tool error quoting the program’s arguments: escaped in the sub-call report', async () => {
    const run = await ptc(['run', files.path('tool-error.js')], quick)
    expect(run.code).toBe(1)
    expect(run.stderr).toMatch(/get_customer .* error [A-Z_]+: customer .*\\x9b2J \\u202eevil/)
    expectNoRawControl(run.stderr)
  })

  test('a tool name, a tool error and a multi-line message from a tools module: escaped, one line each', async () => {
    const run = await ptc(['run', files.path('hostile-tools.js'), '--tools', fixture('tools-hostile.mjs')], quick)
    expect(run.code).toBe(1)
    expectNoRawControl(run.stderr)
    expect(run.stderr).toContain(`echo${ESCAPED}`)
    expect(run.stderr).toMatch(/ {2}fail +\d+ ms .* error [A-Z_]+: broken \\x1b\[31mred/)
    // The message's newline cannot start a line of its own that looks like the CLI's.
    expect(run.stderr).not.toMatch(/^ptc: a forged line/m)
  })

  test('a @description with control characters: escaped in the run header', async () => {
    const run = await ptc(['run', files.path('described.js')], quick)
    expect(run.code).toBe(0)
    // The demo tools: the program is listed first (escaped too), then the header.
    expect(run.stderr.split('\n').find((line) => line.startsWith('ptc: run_code '))).toBe(
      `ptc: run_code "${ESCAPED}" on quickjs, tools: built-in demo (shop); the model receives:`,
    )
    expectNoRawControl(run.stderr)
  })

  test('ptc sdk: the prompt is byte-exact when piped, like the model text of ptc run', async () => {
    const run = await ptc(['sdk', '--tools', fixture('tools-hostile.mjs')], quick)
    expect(run.code).toBe(0)
    // The declarations quote the name as a string (C0 controls as \u001b); what is left raw stays raw when piped.
    expect(run.stdout).toContain('"echo\\u001b[31mred\\u001b]0;title\\u0007 \u009b2J \u202eevil"')
  })

  test('ptc check: a diagnostic quoting the program’s string is escaped', async () => {
    const run = await ptc(['check', files.path('check.ts')], quick)
    expect(run.code).toBe(1)
    // TypeScript writes C0 controls as \u001B itself; C1 and bidi controls it leaves raw, and the CLI escapes them.
    expect(run.stdout).toContain(
      `error TS2322: Type '"\\u001B[31mred\\u001B]0;title\\u0007 \\x9b2J \\u202eevil"' is not assignable to type '"a"'.`,
    )
    expectNoRawControl(run.stdout)
    expectNoRawControl(run.stderr)
  })

  test('a tools module that throws a message with control characters fails to load with it escaped', async () => {
    const dir = tempDir({ 'throws.mjs': `throw new Error(${JSON.stringify(`no ${HOSTILE}`)})\n` })
    try {
      const run = await ptc(['sdk', '--tools', dir.path('throws.mjs')], quick)
      expect(run.code).toBe(2)
      const head = `ptc: tools module ${dir.path('throws.mjs')} failed to load: no ${ESCAPED} (`
      expect(run.stderr.startsWith(head), run.stderr).toBe(true)
      expect(run.stderr.slice(head.length)).toMatch(/^(thrown at [^;\n]+; )?set PTC_DEBUG=1 for its stack\)\n$/)
    } finally {
      dir.cleanup()
    }
  })

  test('ptc log: a session log of a hostile run prints escaped, in the tree and in --json', async () => {
    const session = files.path('hostile.jsonl')
    await ptc(
      ['run', files.path('hostile-tools.js'), '--tools', fixture('tools-hostile.mjs'), '--session', session],
      quick,
    )
    expect(readFileSync(session, 'utf8')).toContain('\\u001b[31mred')
    const log = await ptc(['log', session], quick)
    expect(log.code).toBe(0)
    expectNoRawControl(log.stdout)
    expect(log.stdout).toContain(`echo${ESCAPED}(`)
    expect(log.stdout).not.toMatch(/^ptc: a forged line/m)
    const json = await ptc(['log', session, '--json'], quick)
    expect(json.code).toBe(0)
    expectNoRawControl(json.stdout)
    const tree = JSON.parse(json.stdout) as { calls: { subCalls: { name: string }[] }[] }
    expect(tree.calls[0]?.subCalls.map((c) => c.name)).toEqual([`echo${HOSTILE}`, 'fail'])
  })

  test('ptc log: skipped lines quoting the file are escaped on stderr', async () => {
    const path = files.path('bad-lines.jsonl')
    writeFileSync(path, `{"type":"tool/call","time":1,"callId":"c1","name":"x","arguments":"{}"}\n${HOSTILE}\n`)
    const run = await ptc(['log', path], quick)
    expect(run.code).toBe(0)
    expect(run.stderr).toMatch(/skipped: not JSON/)
    expectNoRawControl(run.stderr)
  })

  test('ptc log: thousands of bad lines are counted after the first twenty, not printed one by one', async () => {
    const path = files.path('many-bad.jsonl')
    writeFileSync(
      path,
      `{"type":"tool/call","time":1,"callId":"c1","name":"x","arguments":"{}"}\n${'nope\n'.repeat(5000)}`,
    )
    const run = await ptc(['log', path], quick)
    expect(run.code).toBe(0)
    const lines = run.stderr.trimEnd().split('\n')
    expect(lines).toHaveLength(21)
    expect(lines[20]).toMatch(/^ptc: .*many-bad\.jsonl: skipped 4980 more lines that are not session events$/)
  })

  test('ptc log: arguments nested too deeply for JSON.stringify do not crash it, and --json prints the log whole', async () => {
    const path = files.path('deep.jsonl')
    const deep = `${'['.repeat(100_000)}${']'.repeat(100_000)}`
    writeFileSync(path, `{"type":"tool/call","time":1,"callId":"c1","name":"x","arguments":${deep}}\n`)
    const tree = await ptc(['log', path], quick)
    expect(tree).toMatchObject({
      code: 0,
      stdout: 'x c1 (arguments nested too deeply to show) — ? — no result logged\n',
    })
    // As JSON, the log is printed whole; what lies deeper than 1 000 levels is said to be too deep to show.
    const json = await ptc(['log', path, '--json'], quick)
    expect(json.code, json.stderr).toBe(0)
    const printed = JSON.parse(json.stdout) as { events: number; calls: { id: string; arguments: unknown }[] }
    expect(printed.events).toBe(1)
    let node = printed.calls[0]?.arguments
    for (let depth = 0; depth < 1000; depth++) node = (node as unknown[])[0]
    expect(node).toBe('(nested too deeply to show)')
    // So are the arguments of a call a suspended program waits on.
    writeFileSync(
      path,
      `{"type":"tool/ptc-suspend","time":2,"rootCallId":"c1","parentCallId":"c1","token":"t","awaiting":[{"name":"x","arguments":${deep}}]}\n`,
    )
    for (const args of [[], ['--json']]) {
      const shown = await ptc(['log', path, ...args], quick)
      expect(shown.code, shown.stderr).toBe(0)
      expect(shown.stdout).toContain('x((nested too deeply to show))')
    }
  })

  test('an unknown command or a path with control characters is escaped too', async () => {
    const unknown = await ptc([`fly${HOSTILE}`], quick)
    expect(unknown.code).toBe(2)
    expectNoRawControl(unknown.stderr)
    const missing = await ptc(['run', `nope${HOSTILE}\nptc: forged.js`], quick)
    expect(missing.code).toBe(2)
    expect(missing.stderr).toBe(`ptc: cannot read program nope${ESCAPED}\\nptc: forged.js: no such file\n`)
  })

  test('ptc serve messages and usage errors reach stderr escaped', async () => {
    const serve = await ptc(['serve', `--upstream${HOSTILE}`], quick)
    expect(serve.code).toBe(2)
    expectNoRawControl(serve.stderr)
    expect(serve.stderr).toContain(ESCAPED)
  })
})

describe.runIf(process.platform === 'linux' && hasScript())('on a terminal, stdout is escaped as well', () => {
  test('ptc run: the model text and the report carry no raw control character', async () => {
    // Without colour; and a loaded machine may take over a second: the CLI's own progress line (no text of the
    // program in it) is taken out like the \r\n that `script` makes of each \n. Then nothing a terminal acts on may remain.
    const run = await ptcOnTerminal(['run', files.path('throws.js')], '', { NO_COLOR: '1' })
    const screen = run.stdout
      // eslint-disable-next-line no-control-regex -- the CLI's own erase-line sequence
      .replace(/\r\x1b\[2K(ptc: running [\d.]+ s; sub-calls: \d+ started, \d+ settled)?/g, '')
      .replace(/\r\n/g, '\n')
    expectNoRawControl(screen)
    expect(screen).toContain(`log ${ESCAPED}`)
    expect(screen).toContain(`boom ${ESCAPED}`)
  })

  test('ptc sdk: the prompt is escaped on a terminal', async () => {
    const run = await ptcOnTerminal(['sdk', '--tools', fixture('tools-hostile.mjs')], '', { NO_COLOR: '1' })
    const screen = run.stdout.replace(/\r\n/g, '\n')
    expectNoRawControl(screen)
    expect(screen).toContain('"echo\\u001b[31mred\\u001b]0;title\\u0007 \\x9b2J \\u202eevil"')
  })
})

describe('paths that are not regular files end at once with exit 2', () => {
  const cases: [string, () => string[], RegExp][] = [
    [
      'ptc run /dev/zero',
      () => ['run', '/dev/zero'],
      /^ptc: program \/dev\/zero is a character device, not a regular file; give - to read the program from standard input$/,
    ],
    [
      'ptc check /dev/zero',
      () => ['check', '/dev/zero'],
      /^ptc: program \/dev\/zero is a character device, not a regular file; give - to read the program from standard input$/,
    ],
    [
      'ptc log /dev/zero',
      () => ['log', '/dev/zero'],
      /^ptc: session log \/dev\/zero is a character device, not a regular file$/,
    ],
    [
      '--tools /dev/zero',
      () => ['run', files.path('ok.js'), '--tools', '/dev/zero'],
      /^ptc: tools module \/dev\/zero is a character device, not a regular file$/,
    ],
    [
      'ptc sdk --tools /dev/zero',
      () => ['sdk', '--tools', '/dev/zero'],
      /^ptc: tools module \/dev\/zero is a character device, not a regular file$/,
    ],
    [
      'ptc run on a FIFO',
      () => ['run', files.path('fifo')],
      /^ptc: program .*fifo is a FIFO \(named pipe\), not a regular file; give - to read the program from standard input$/,
    ],
    [
      'ptc log on a FIFO',
      () => ['log', files.path('fifo')],
      /^ptc: session log .*fifo is a FIFO \(named pipe\), not a regular file$/,
    ],
    [
      '--tools on a FIFO',
      () => ['sdk', '--tools', files.path('fifo')],
      /^ptc: tools module .*fifo is a FIFO \(named pipe\), not a regular file$/,
    ],
    [
      '--session on a FIFO',
      () => ['run', files.path('ok.js'), '--session', files.path('fifo')],
      /^ptc: cannot open session file .*fifo: it is a FIFO \(named pipe\), not a regular file$/,
    ],
    [
      '--session /dev/zero',
      () => ['run', files.path('ok.js'), '--session', '/dev/zero'],
      /^ptc: cannot open session file \/dev\/zero: it is a character device, not a regular file$/,
    ],
    [
      'ptc run on a directory',
      () => ['run', files.path('folder')],
      /^ptc: program .*folder is a directory, not a regular file$/,
    ],
    [
      'ptc log on a directory',
      () => ['log', files.path('folder')],
      /^ptc: session log .*folder is a directory, not a regular file$/,
    ],
    [
      '--tools on a directory',
      () => ['sdk', '--tools', files.path('folder')],
      /^ptc: tools module .*folder is a directory, not a regular file$/,
    ],
  ]
  test.each(cases)(
    '%s',
    async (_label, args, expected) => {
      const started = performance.now()
      const run = await ptc(args(), quick)
      expect(run.code).toBe(2)
      expect(run.stdout).toBe('')
      expect(run.stderr.trimEnd()).toMatch(expected)
      expect(run.stderr.trimEnd().split('\n')).toHaveLength(1)
      expect(noStack(run.stderr)).toBe(true)
      expect(performance.now() - started).toBeLessThan(10_000)
    },
    HANG_TEST_MS,
  )
})

describe('oversized input is a clear error', () => {
  test('a program over 1 MiB (the sandbox’s maxProgramBytes) is exit 2 with the limit', async () => {
    const path = files.path('big.js')
    writeFileSync(path, `${' '.repeat(1024 * 1024)}\nreturn 1\n`)
    const run = await ptc(['run', path], quick)
    expect(run.code).toBe(2)
    expect(run.stderr).toMatch(
      /^ptc: program .*big\.js is too large: 1048586 bytes, the limit is 1 MiB \(1048576 bytes\)\n$/,
    )
  })

  test('a program over 1 MiB on stdin is exit 2 as well', async () => {
    const run = await ptc(['run', '-'], { ...quick, input: `${'/'.repeat(1024 * 1024 + 10)}` })
    expect(run.code).toBe(2)
    expect(run.stderr).toBe(
      'ptc: program (stdin) is too large: more than 1048576 bytes, the limit is 1 MiB (1048576 bytes)\n',
    )
  })

  test(
    'a one-megabyte line of blanks after @description is read in linear time',
    async () => {
      const path = files.path('blank-description.js')
      writeFileSync(path, `// @description x${' '.repeat(1000 * 1000)}y\nreturn 1\n`)
      const run = await ptc(['run', path, '--json'], quick)
      expect(run.code).toBe(0)
    },
    HANG_TEST_MS,
  )
})

describe('other input that used to crash or stall the CLI', () => {
  test('--timeout above what a Node timer holds is a usage error (it used to time out at once)', async () => {
    const run = await ptc(['run', files.path('ok.js'), '--timeout', '99999999999'], quick)
    expect(run).toMatchObject({
      code: 2,
      stderr: 'ptc: --timeout must be at most 2147483647 milliseconds, not 99999999999\n',
    })
    const memory = await ptc(['run', files.path('ok.js'), '--memory', '99999999999'], quick)
    expect(memory).toMatchObject({
      code: 2,
      stderr: 'ptc: --memory must be at most 1048576 megabytes, not 99999999999\n',
    })
  })

  test('ptc check on a program nested too deeply for the checker: exit 1 with a reason, no internal error', async () => {
    const path = files.path('nested.ts')
    writeFileSync(path, `return ${'('.repeat(100_000)}1${')'.repeat(100_000)}\n`)
    const run = await ptc(['check', path], quick)
    expect(run.code).toBe(1)
    expect(run.stderr).toMatch(
      /^ptc: cannot type-check .*nested\.ts: Maximum call stack size exceeded \(is it nested too deeply\?\)\n$/,
    )
  })

  test('a tool that leaves a rejected promise unhandled: one escaped warning, the run goes on', async () => {
    const dir = tempDir({ 'stray.js': 'return await tools.stray_rejection({})\n' })
    try {
      const run = await ptc(['run', dir.path('stray.js'), '--tools', fixture('tools-stray.mjs')], quick)
      expect(run.code, run.stderr).toBe(0)
      expect(run.stdout).toBe('ok\n')
      expect(run.stderr).toContain(
        'ptc: warning: a promise was rejected and never handled (a tool or tools module?): stray \\x1b[31mrejection\n',
      )
      expect(noStack(run.stderr)).toBe(true)
      expectNoRawControl(run.stderr)
    } finally {
      dir.cleanup()
    }
  })

  test('a tool that throws from a timer: one escaped line and exit 1, not a stack trace', async () => {
    const dir = tempDir({ 'throw.js': 'return await tools.timer_throw({})\n' })
    try {
      const run = await ptc(['run', dir.path('throw.js'), '--tools', fixture('tools-stray.mjs')], quick)
      expect(run.code).toBe(1)
      expect(reason(run)).toBe(
        'ptc: internal error: an exception outside any call (a tool or tools module?): late \\x1b[31mthrow (set PTC_DEBUG=1 for the stack)',
      )
      expect(noStack(run.stderr)).toBe(true)
      expectNoRawControl(run.stderr)
    } finally {
      dir.cleanup()
    }
  })

  test(
    'a tool that never answers and ignores its abort signal: the run still ends at its timeout',
    async () => {
      const dir = tempDir({ 'wait.js': 'return await tools.wait({})\n' })
      try {
        const run = await ptc(
          ['run', dir.path('wait.js'), '--tools', fixture('tools-never.mjs'), '--timeout', '2000'],
          quick,
        )
        expect(run.code).toBe(1)
        expect(run.stderr).toMatch(/^ptc: the program failed \(timeout\): wall-clock limit of 2000 ms exceeded/m)
        expect(reason(run)).toBe(
          'ptc: the run stopped at its wall-clock limit of 2000 ms, set on the command line: raise it with --wall MS, if the program needs more',
        )
      } finally {
        dir.cleanup()
      }
    },
    HANG_TEST_MS,
  )
})

describe('a tools module that never finishes or keeps the process alive', () => {
  test(
    'an import that awaits forever: a clear message and exit 1, not a silent exit',
    async () => {
      const dir = tempDir({ 'forever.mjs': 'await new Promise(() => {})\n' })
      try {
        const run = await ptc(['sdk', '--tools', dir.path('forever.mjs')], quick)
        expect(run.code).toBe(1)
        expect(run.stderr).toMatch(
          /^ptc: the command stopped before it finished: something it waited for can never settle/,
        )
      } finally {
        dir.cleanup()
      }
    },
    HANG_TEST_MS,
  )

  test(
    'a module with a timer that never stops: the command still exits when it is done',
    async () => {
      const path = fixture('tools-keeps-alive.mjs')
      const run = await ptc(['run', files.path('ok.js'), '--tools', path, '--json'], quick)
      expect(run.code).toBe(0)
      expect(JSON.parse(run.stdout)).toMatchObject({ ok: true, value: 1 })
    },
    HANG_TEST_MS,
  )
})
