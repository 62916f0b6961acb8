/** `ptc run --session-state`: a sandbox session that lives across processes, kept in a folder of sealed snapshots. */
import type { ChildProcess } from 'node:child_process'
import { existsSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { ROOT, buildCli } from './build.js'
import { noStack, ptc, tempDir } from './cli.js'

const files = tempDir({
  'count.js':
    'globalThis.count = (globalThis.count ?? 0) + 1\nconst hits = await tools.search_products({ query: "lamp" })\nreturn count',
  'declare.ts': 'const greeting: string = "hello"\nfunction shout(s: string) { return s.toUpperCase() }',
  'use.ts': 'return shout(greeting)',
})
afterAll(() => files.cleanup())
beforeAll(() => buildCli(), 120_000)

describe('ptc run --session-state', () => {
  test('each process continues the session the last one left; another key starts apart', async () => {
    const cwd = files.dir
    for (const expected of ['1', '2', '3']) {
      const run = await ptc(['run', 'count.js', '--session-state', 'counter'], { cwd })
      expect(run.code).toBe(0)
      expect(run.stdout.trim()).toBe(expected)
    }
    const last = await ptc(['run', 'count.js', '--session-state', 'counter', '--json'], { cwd })
    const report = JSON.parse(last.stdout) as {
      value: number
      session: { key: string; fresh: boolean; kept: boolean; runs: number }
    }
    expect(report.value).toBe(4)
    expect(report.session).toMatchObject({ key: 'counter', fresh: false, kept: true, runs: 4 })
    const other = await ptc(['run', 'count.js', '--session-state', 'other'], { cwd })
    expect(other.stdout.trim()).toBe('1')
    expect(other.stderr).toContain('session "other": new')
    // TypeScript declarations carry over as well.
    expect((await ptc(['run', 'declare.ts', '--session-state', 'ts'], { cwd })).code).toBe(0)
    expect((await ptc(['run', 'use.ts', '--session-state', 'ts'], { cwd })).stdout.trim()).toBe('HELLO')
    // The folder and its files are private to the user.
    const dir = join(cwd, '.ptc/sessions')
    expect(statSync(dir).mode & 0o777).toBe(0o700)
    for (const name of readdirSync(dir)) expect(statSync(join(dir, name)).mode & 0o777).toBe(0o600)
  }, 60_000) // seven processes one after the other: 5 s on a quiet machine, past 20 s on a loaded one

  test('a session file altered on disk is refused: the run starts fresh and says why', async () => {
    const { dir, cleanup } = tempDir({ 'count.js': readFileSync(files.path('count.js'), 'utf8') })
    try {
      expect(
        (await ptc(['run', 'count.js', '--session-state', 's', '--session-dir', 'state'], { cwd: dir })).stdout.trim(),
      ).toBe('1')
      const stored = readdirSync(join(dir, 'state')).find((name) => name.endsWith('.session'))
      expect(stored).toBeDefined()
      const path = join(dir, 'state', stored as string)
      const bytes = readFileSync(path)
      bytes[bytes.length - 40] = (bytes[bytes.length - 40] as number) ^ 0xff
      writeFileSync(path, bytes)
      const run = await ptc(['run', 'count.js', '--session-state', 's', '--session-dir', 'state'], { cwd: dir })
      expect(run.code).toBe(0)
      expect(run.stdout).toContain('[sandbox session: ')
      expect(run.stdout).toContain('failed authentication')
      expect(run.stdout.trim().endsWith('1')).toBe(true)
      expect(noStack(run.stderr)).toBe(true)
    } finally {
      cleanup()
    }
  })

  test('a second run of a session while one runs is refused and changes nothing; after a kill -9 of the first, the next run continues at once', async () => {
    const { dir, cleanup } = tempDir()
    try {
      writeFileSync(
        join(dir, 'hold.js'),
        `globalThis.count = (globalThis.count ?? 0) + 1\nawait tools.gate({ dir: ${JSON.stringify(dir)} })\nreturn count`,
      )
      writeFileSync(join(dir, 'count.js'), 'globalThis.count = (globalThis.count ?? 0) + 1\nreturn count')
      const gated = [
        'run',
        'hold.js',
        '--tools',
        join(ROOT, 'test/cli/fixtures/tools-gate.mjs'),
        '--session-state',
        'g',
      ]
      // Until the gated run is in its tool (or has ended: then the test fails on what it printed).
      const entered = async (run: Promise<unknown>): Promise<void> => {
        let ended = false
        void run.finally(() => (ended = true))
        while (!ended && !existsSync(join(dir, 'entered'))) await new Promise((resolve) => setTimeout(resolve, 20))
        expect(ended, 'the gated run ended before it reached its tool').toBe(false)
      }
      expect((await ptc(['run', 'count.js', '--session-state', 'g'], { cwd: dir })).stdout.trim()).toBe('1')
      const holding = ptc(gated, { cwd: dir, killAfterMs: 60_000 })
      await entered(holding)
      const refused = await ptc(['run', 'count.js', '--session-state', 'g'], { cwd: dir })
      expect(refused.code).toBe(1)
      expect(refused.stdout).toMatch(
        /session "g" is held by another process sharing the session store .*: this program did not run/,
      )
      writeFileSync(join(dir, 'open'), '')
      const held = await holding
      expect(held.code, held.stderr).toBe(0)
      expect(held.stdout.trim()).toBe('2')
      // The refused run changed nothing.
      expect((await ptc(['run', 'count.js', '--session-state', 'g'], { cwd: dir })).stdout.trim()).toBe('3')
      rmSync(join(dir, 'open'))
      rmSync(join(dir, 'entered'))
      let child: ChildProcess | undefined
      const killed = ptc(gated, { cwd: dir, killAfterMs: 60_000, onSpawn: (c) => (child = c) })
      await entered(killed)
      child?.kill('SIGKILL')
      expect((await killed).code).toBeNull()
      // What the killed run did was never saved; its claim is taken over at once (its process is gone).
      const next = await ptc(['run', 'count.js', '--session-state', 'g'], { cwd: dir })
      expect(next.code, next.stdout).toBe(0)
      expect(next.stdout.trim()).toBe('4')
    } finally {
      cleanup()
    }
  }, 90_000)

  test('misuse exits 2 with one line: isolated-vm, an empty key, --session-dir alone, a secret others can read', async () => {
    const cwd = files.dir
    const ivm = await ptc(['run', 'count.js', '--session-state', 'k', '--sandbox', 'isolated-vm'], { cwd })
    expect(ivm.code).toBe(2)
    expect(ivm.stderr).toContain('sandbox sessions need the quickjs sandbox')
    const empty = await ptc(['run', 'count.js', '--session-state', ''], { cwd })
    expect(empty.code).toBe(2)
    expect(empty.stderr).toContain('--session-state needs a key')
    const alone = await ptc(['run', 'count.js', '--session-dir', 'x'], { cwd })
    expect(alone.code).toBe(2)
    expect(alone.stderr).toContain('--session-dir goes with --session-state')
    const { dir, cleanup } = tempDir({ 'count.js': 'return 1' })
    try {
      expect((await ptc(['run', 'count.js', '--session-state', 'k'], { cwd: dir })).code).toBe(0)
      const { chmodSync } = await import('node:fs')
      chmodSync(join(dir, '.ptc/sessions/secret'), 0o644)
      const open = await ptc(['run', 'count.js', '--session-state', 'k'], { cwd: dir })
      expect(open.code).toBe(2)
      expect(open.stderr).toContain('can be read by others')
      // A secret that is a pipe, or a folder others can write to (where another user could put one), is refused
      // before anything is read from it: nothing waits on a pipe.
      const { mkdirSync, rmSync } = await import('node:fs')
      const { execFileSync } = await import('node:child_process')
      rmSync(join(dir, '.ptc/sessions/secret'))
      execFileSync('mkfifo', ['-m', '600', join(dir, '.ptc/sessions/secret')])
      const piped = await ptc(['run', 'count.js', '--session-state', 'k', '--wall', '2000'], { cwd: dir })
      expect(piped.code).toBe(2)
      expect(piped.stderr).toContain('/.ptc/sessions/secret is not a file')
      mkdirSync(join(dir, 'shared'))
      chmodSync(join(dir, 'shared'), 0o1777)
      const shared = await ptc(['run', 'count.js', '--session-state', 'k', '--session-dir', 'shared'], { cwd: dir })
      expect(shared.code).toBe(2)
      expect(shared.stderr).toContain('/shared can be written by others (mode 1777): chmod 700 it')
      for (const run of [ivm, empty, alone, open, piped, shared]) expect(noStack(run.stderr)).toBe(true)
    } finally {
      cleanup()
    }
  }, 90_000)
})
