/**
 * Durable approval end to end through ToolsService: a sub-call whose approval is deferred suspends the
 * program; the harness process is killed; a new process resumes it with the decision, and the program
 * goes on where it waited (real child processes, a real file store, the session log read by `ptc log`).
 */
import { spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { buildCli } from '../cli/build.js'
import { ptc } from '../cli/cli.js'

const HOST = fileURLToPath(new URL('./fixtures/durable-host.ts', import.meta.url))
const root = mkdtempSync(join(tmpdir(), 'ptc-durable-'))
afterAll(() => rmSync(root, { recursive: true, force: true }))
beforeAll(() => buildCli(), 240_000)

interface HostOut {
  pid: number
  result?: {
    isError: boolean
    value?: {
      logs: string[]
      result?: unknown
      awaiting?: { token: string; calls: { tool: string; arguments: unknown; reason?: string }[] }
    }
    content: { text: string }[]
  }
  callId?: string
  error?: { name: string; code: string; message: string }
}

/** One harness process over the shared store of `dir` (and, with `sessions`, its session store). */
function host(
  dir: string,
  args: string[],
  sessions = false,
): Promise<{ code: number | null; signal: NodeJS.Signals | null; out: HostOut | undefined; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--conditions=@ptc/source', '--import', 'tsx', HOST, ...args], {
      env: {
        ...process.env,
        NODE_OPTIONS: '',
        PTC_SECRET: secret,
        PTC_STORE_DIR: join(dir, 'store'),
        PTC_LOG: join(dir, 'session.jsonl'),
        PTC_REMOVED: join(dir, 'removed.txt'),
        ...(sessions && { PTC_SESSIONS_DIR: join(dir, 'sessions') }),
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()))
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()))
    child.once('error', reject)
    child.once('close', (code, signal) => {
      const line = stdout.trim().split('\n').at(-1)
      resolve({ code, signal, stderr, out: line?.startsWith('{') === true ? (JSON.parse(line) as HostOut) : undefined })
    })
  })
}

const secret = randomBytes(32).toString('hex')
const PROGRAM = [
  'const before = await tools.read({ n: 4 })',
  'console.log("read", before.n)',
  'let removed',
  'try { removed = await tools.remove({ path: "/tmp/old.log" }) } catch (e) { removed = { denied: e.code, name: e.name } }',
  'console.log("after the decision")',
  'return { before: before.n, removed, again: (await tools.read({ n: 5 })).n }',
].join('\n')

const removedIn = (dir: string): string[] =>
  existsSync(join(dir, 'removed.txt')) ? readFileSync(join(dir, 'removed.txt'), 'utf8').trim().split('\n') : []

describe('durable approval across a restart of the harness', () => {
  test.each([
    ['allowed-once', { before: 40, removed: { removed: '/tmp/old.log' }, again: 50 }, ['/tmp/old.log']],
    ['rejected', { before: 40, removed: { denied: 'DENIED', name: 'ToolCallError' }, again: 50 }, []],
  ] as const)(
    'deferred, the harness killed, resumed in a new process: %s',
    async (decision, value, removed) => {
      const dir = mkdtempSync(join(root, 'case-'))
      const first = await host(dir, ['start', PROGRAM])
      expect(first.signal, first.stderr).toBe('SIGKILL')
      const suspended = first.out?.result
      expect(suspended?.isError).toBe(false)
      expect(suspended?.value?.logs).toEqual(['read 40'])
      const awaiting = suspended?.value?.awaiting
      expect(awaiting?.calls).toEqual([
        { tool: 'remove', arguments: { path: '/tmp/old.log' }, reason: 'removes a file' },
      ])
      expect(suspended?.content[0]?.text).toContain(
        'waiting for approval of tools.remove({"path":"/tmp/old.log"}) (removes a file)',
      )
      // Only the store holds the program now; the approved body has not run.
      expect(readdirSync(join(dir, 'store')).length).toBe(1)
      expect(removedIn(dir)).toEqual([])

      const token = awaiting?.token as string
      const second = await host(dir, ['resume', token, decision])
      expect(second.code, second.stderr).toBe(0)
      expect(second.out?.pid).not.toBe(first.out?.pid)
      expect(second.out?.callId).toBe('call-1')
      expect(second.out?.result?.isError).toBe(false)
      expect(second.out?.result?.value).toEqual({ logs: ['after the decision'], result: value })
      expect(removedIn(dir)).toEqual(removed)

      // A token resumes once: the store no longer has it.
      const again = await host(dir, ['resume', token, decision])
      expect(again.out?.error).toMatchObject({ name: 'ResumeError', code: 'UNKNOWN_TOKEN' })
      expect(removedIn(dir)).toEqual(removed)

      // The session log records the suspension and the resumption, and `ptc log` shows them in place.
      const events = readFileSync(join(dir, 'session.jsonl'), 'utf8')
        .trim()
        .split('\n')
        .map(
          (l) =>
            JSON.parse(l) as {
              type: string
              token?: string
              decisions?: string[]
              error?: { info?: { code?: string } }
            },
        )
      const types = events.map((e) => e.type)
      expect(types.indexOf('tool/ptc-suspend')).toBeGreaterThan(types.indexOf('tool/ptc-dispatch'))
      expect(events.find((e) => e.type === 'tool/ptc-suspend')?.token).toBe(token)
      expect(events.find((e) => e.type === 'tool/ptc-resume')).toMatchObject({ token, decisions: [decision] })
      expect(events.filter((e) => e.error?.info?.code === 'APPROVAL_DEFERRED')).toHaveLength(1)
      const results = events.filter((e) => e.type === 'tool/result') as unknown as {
        resumed?: boolean
        turn: number
        isError: boolean
      }[]
      expect(results).toMatchObject([
        { turn: 1, isError: false },
        { turn: 2, isError: false, resumed: true },
      ])
      const shown = await ptc(['log', join(dir, 'session.jsonl')])
      expect(shown.code, shown.stderr).toBe(0)
      const lines = shown.stdout.split('\n')
      const at = (pattern: RegExp): number => lines.findIndex((l) => pattern.test(l))
      expect(
        at(/suspended awaiting approval of remove\(\{"path":"\/tmp\/old\.log"\}\) \(removes a file\) — token ptc-run-/),
      ).toBeGreaterThan(at(/call-1:ptc:2 remove.*APPROVAL_DEFERRED/))
      expect(at(new RegExp(`resumed \\(${decision}\\)`))).toBeGreaterThan(at(/suspended awaiting approval/))
      expect(at(/call-1:ptc:3 remove/)).toBeGreaterThan(at(/resumed/))
      expect(at(/call-1:ptc:4 read/)).toBeGreaterThan(at(/call-1:ptc:3 remove/))
      // The call's line shows the resumed program's outcome: its result, not the suspension.
      expect(lines[at(/^run_code call-1/)]).toMatch(/ok .*"before": 40/)
    },
    120_000,
  )

  test.each([false, true])(
    'a harness killed in the middle of a resume, before the program went on, loses nothing: the next process resumes it, the approved call runs once (in a sandbox session: %s)',
    async (sessions) => {
      const dir = mkdtempSync(join(root, 'case-'))
      if (sessions)
        expect(
          (await host(dir, ['run', 'let notes = ["a"]; return notes.length'], true)).out?.result?.value?.result,
        ).toBe(1)
      const code = sessions
        ? 'notes.push("b"); const r = await tools.remove({ path: "/tmp/y" }); notes.push(r.removed); return notes'
        : 'return (await tools.remove({ path: "/tmp/y" })).removed'
      const first = await host(dir, ['start', code], sessions)
      const token = first.out?.result?.value?.awaiting?.token as string
      expect(token, first.stderr).toMatch(/^ptc-run-/)
      const dies = await host(dir, ['resume-dies', token, 'allowed-once'], sessions)
      expect(dies.signal, dies.stderr).toBe('SIGKILL')
      expect(dies.out).toMatchObject({ dying: true })
      expect(removedIn(dir)).toEqual([])
      // Before: the state had been taken out of the store by the dead process, and the token was unknown.
      const resumed = await host(dir, ['resume', token, 'allowed-once'], sessions)
      expect(resumed.code, resumed.stderr).toBe(0)
      expect(resumed.out?.result?.value?.result, JSON.stringify(resumed.out)).toEqual(
        sessions ? ['a', 'b', '/tmp/y'] : '/tmp/y',
      )
      expect(removedIn(dir)).toEqual(['/tmp/y'])
      const again = await host(dir, ['resume', token, 'allowed-once'], sessions)
      expect(again.out?.error).toMatchObject({ name: 'ResumeError', code: 'UNKNOWN_TOKEN' })
      expect(removedIn(dir)).toEqual(['/tmp/y'])
      if (sessions) expect((await host(dir, ['run', 'return notes.length'], true)).out?.result?.value?.result).toBe(3)
    },
    120_000,
  )

  test("in a sandbox session: the session waits for the killed harness's program, a new process resumes it and the session goes on from its end", async () => {
    const dir = mkdtempSync(join(root, 'case-'))
    const text = (out: HostOut | undefined): string => out?.result?.content[0]?.text ?? JSON.stringify(out)
    const made = await host(dir, ['run', 'let notes = ["a"]; return notes.length'], true)
    expect(made.out?.result?.value?.result, made.stderr).toBe(1)
    const first = await host(
      dir,
      [
        'start',
        'notes.push("b"); const r = await tools.remove({ path: "/tmp/x" }); notes.push(r.removed); return notes',
      ],
      true,
    )
    expect(first.signal, first.stderr).toBe('SIGKILL')
    const token = first.out?.result?.value?.awaiting?.token as string
    expect(token).toMatch(/^ptc-run-/)
    expect(text(first.out)).toContain('[sandbox session: the program suspended: the session waits for its resume')
    // Another process does not run the session meanwhile: it is held for the resume, not merely claimed by a dead process.
    const held = await host(dir, ['run', 'return notes'], true)
    expect(held.out?.result?.isError).toBe(true)
    expect(text(held.out)).toMatch(
      /session "conversation-1" waits for the resume of a program of it that suspended \(durable approval\)/,
    )
    const resumed = await host(dir, ['resume', token, 'allowed-once'], true)
    expect(resumed.code, resumed.stderr).toBe(0)
    expect(resumed.out?.result?.value?.result).toEqual(['a', 'b', '/tmp/x'])
    expect(removedIn(dir)).toEqual(['/tmp/x'])
    // The session's state is the resumed program's, in the next process too.
    const after = await host(dir, ['run', 'notes.push("c"); return notes'], true)
    expect(after.out?.result?.value?.result).toEqual(['a', 'b', '/tmp/x', 'c'])
  }, 120_000)

  test('a tampered state is refused and stays stored; the untouched one resumes', async () => {
    const dir = mkdtempSync(join(root, 'case-'))
    const first = await host(dir, ['start', PROGRAM])
    const token = first.out?.result?.value?.awaiting?.token as string
    const [file] = readdirSync(join(dir, 'store'))
    const path = join(dir, 'store', file as string)
    const original = readFileSync(path)
    const tampered = Buffer.from(original)
    tampered[tampered.length - 100] = (tampered[tampered.length - 100] as number) ^ 1
    writeFileSync(path, tampered)
    const refused = await host(dir, ['resume', token, 'allowed-once'])
    expect(refused.out?.error).toMatchObject({ name: 'ResumeError', code: 'STATE_REFUSED' })
    expect(refused.out?.error?.message).toMatch(/tampered|authentic/i)
    // Still stored, as it was (the store's header aside: the 24 bytes before the state).
    expect(readFileSync(path).subarray(24)).toEqual(tampered.subarray(24))
    expect(removedIn(dir)).toEqual([])
    writeFileSync(path, original)
    const resumed = await host(dir, ['resume', token, 'allowed-once'])
    expect(resumed.out?.result?.value?.result).toMatchObject({ removed: { removed: '/tmp/old.log' } })
  }, 120_000)
})
