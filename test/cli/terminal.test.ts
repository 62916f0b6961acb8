/**
 * What `ptc run` draws for a person and only for a person: colour on stderr and a
 * live progress line, on a pseudo-terminal (util-linux `script`), never in a pipe
 * or a file, never on stdout (the model text).
 */
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { buildCli, ROOT } from './build.js'
import { hasScript, onTerminal, ptc, tempDir } from './cli.js'

const CLEAR_LINE = '\r\x1b[2K'
const slowTools = join(ROOT, 'test/cli/fixtures/tools-slow.mjs')

const files = tempDir({
  'slow.js': 'const r = await tools.sleep({ ms: 2000 })\nreturn "done " + r\n',
  'forever.js': 'await tools.sleep({ ms: 60000 })\nreturn "never"\n',
  'fails.js': 'await tools.list_orders({ limit: 1 })\nthrow new Error("no good")\n',
})
afterAll(() => files.cleanup())
beforeAll(() => buildCli(), 120_000)

/* eslint-disable no-control-regex -- the control sequences the CLI writes are what these tests look for */
const SGR = /\x1b\[\d+m/

describe('colour on stderr', () => {
  test('in a pipe: none by default; FORCE_COLOR colours stderr only; NO_COLOR wins over it', async () => {
    const plain = await ptc(['run', files.path('fails.js')])
    expect(plain.code).toBe(1)
    expect(plain.stderr).not.toContain('\x1b')
    const forced = await ptc(['run', files.path('fails.js')], { env: { FORCE_COLOR: '1' } })
    expect(forced.stderr).toMatch(/ {2}\x1b\[32mok\x1b\[39m\n/)
    expect(forced.stderr).toContain('\x1b[31mptc: the program failed (exception): ')
    expect(forced.stdout).not.toContain('\x1b')
    expect(forced.stdout).toBe(plain.stdout)
    const json = await ptc(['run', files.path('fails.js'), '--json'], { env: { FORCE_COLOR: '1' } })
    expect(json.stdout).not.toContain('\x1b')
    expect(json.stderr).toMatch(/^\x1b\[31mptc: the program failed \(exception\): .*\x1b\[39m\n$/)
    const both = await ptc(['run', files.path('fails.js')], { env: { FORCE_COLOR: '1', NO_COLOR: '1' } })
    expect(both.stderr).not.toContain('\x1b')
  }, 60_000) // four runs of the binary: 20 s on a heavily loaded machine

  test('a usage error is red on a coloured stderr, and still one line', async () => {
    const run = await ptc(['run'], { env: { FORCE_COLOR: '1' } })
    expect(run.stderr).toBe('\x1b[31mptc: missing program file (or - for stdin); see `ptc run --help`\x1b[39m\n')
  })
})

describe.runIf(hasScript())('on a terminal', () => {
  test('stderr is coloured (sub-call outcome, the failure line); stdout, the model text, never is', async () => {
    const out = files.path('stdout.txt')
    const run = await onTerminal(['run', files.path('fails.js')], { stdoutFile: out }).done
    expect(run.code).toBe(1)
    expect(run.stdout).toMatch(/ {2}\x1b\[32mok\x1b\[39m\r\n/)
    expect(run.stdout).toContain('\x1b[31mptc: the program failed (exception): ')
    const stdout = readFileSync(out, 'utf8')
    expect(stdout).toContain('no good')
    expect(stdout).not.toContain('\x1b')
  })

  test('NO_COLOR (any non-empty value) turns colour off', async () => {
    const run = await onTerminal(['run', files.path('fails.js')], { env: { NO_COLOR: 'yes' } }).done
    expect(run.code).toBe(1)
    expect(run.stdout).toContain('ptc: the program failed (exception): ')
    expect(run.stdout).not.toMatch(SGR)
  })

  test('a run past a second shows a progress line, rewritten in place and cleared before the output', async () => {
    const run = await onTerminal(['run', files.path('slow.js'), '--tools', slowTools], { env: { NO_COLOR: '1' } }).done
    expect(run.code).toBe(0)
    const screen = run.stdout
    expect(screen).toMatch(/\r\x1b\[2Kptc: running \d+\.\d s; sub-calls: 1 started, 0 settled/)
    const lastDraw = screen.lastIndexOf('ptc: running')
    const cleared = screen.indexOf(CLEAR_LINE, lastDraw)
    expect(cleared).toBeGreaterThan(lastDraw)
    expect(screen.indexOf('done slept', cleared)).toBeGreaterThan(cleared)
    // The model text and the report start on a clean line: nothing of the progress line is left before them.
    expect(screen.slice(cleared + CLEAR_LINE.length)).toMatch(/^done slept\r\n/)
  })

  test('Ctrl-C while the line shows: it is cleared, never redrawn, and the run ends as aborted', async () => {
    const terminal = onTerminal(['run', files.path('forever.js'), '--tools', slowTools], { env: { NO_COLOR: '1' } })
    await terminal.waitFor('ptc: running')
    terminal.type('\x03')
    const run = await terminal.done
    expect(run.code).toBe(1)
    const screen = run.stdout
    const lastDraw = screen.lastIndexOf('ptc: running')
    const cleared = screen.indexOf(CLEAR_LINE, lastDraw)
    expect(cleared).toBeGreaterThan(lastDraw)
    expect(screen.slice(cleared)).toMatch(/ptc: the program failed \(abort\)/)
  }, 40_000)
})

describe('in a pipe', () => {
  test('a run past a second never writes a progress line or any control sequence', async () => {
    const run = await ptc(['run', files.path('slow.js'), '--tools', slowTools])
    expect(run.code).toBe(0)
    expect(run.stdout).toBe('done slept\n')
    expect(run.stderr).not.toMatch(/[\r\x1b]/)
    expect(run.stderr).not.toContain('running')
  })
})
