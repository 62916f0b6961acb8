/**
 * `ptc run --approve defer` and `ptc resume`: a program that waits for a person's approval, kept in a folder of
 * sealed states, continued by another process with the decision. Real CLI processes, one after the other.
 */
import { readdirSync, statSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { ROOT, buildCli } from './build.js'
import { noStack, ptc, tempDir, type CliRun } from './cli.js'

const refundDamaged = join(ROOT, 'examples/shop/programs/refund-damaged.ts')

/** Counts its runs in the session, asks for a refund, and returns what became of it (its code when refused). */
const COUNTED_REFUND = `globalThis.n = (globalThis.n ?? 0) + 1
let outcome
try { outcome = (await tools.issue_refund({ orderId: 'O-1028', amountCents: 100, reason: 'scratched' })).refundId } catch (e) { outcome = e.code }
return { n, outcome }`

const files = tempDir({ 'counted-refund.js': COUNTED_REFUND })
afterAll(() => files.cleanup())
beforeAll(() => buildCli(), 120_000)

/** The token `ptc run --approve defer` printed on stderr, and the flags it said to resume with. */
function resumeHint(run: CliRun): { token: string; flags: string[] } {
  const match = /go on with: ptc resume (\S+) --decision allow\|reject(.*)$/m.exec(run.stderr)
  if (match === null) throw new Error(`no resume hint in:\n${run.stderr}`)
  return {
    token: match[1] as string,
    flags: (match[2] as string)
      .trim()
      .split(' ')
      .filter((word) => word !== ''),
  }
}

describe('ptc run --approve defer, then ptc resume', () => {
  test('the program suspends at the call (exit 3); a new process allows it and the program goes on; a token resumes once', async () => {
    const { dir, cleanup } = tempDir()
    try {
      const run = await ptc(['run', refundDamaged, '--approve', 'defer', '--session', 'log.jsonl'], { cwd: dir })
      expect(run.code).toBe(3)
      expect(run.stdout).toMatch(/^\(the program is waiting for approval of tools\.issue_refund\(\{"orderId":"O-1028",/)
      expect(run.stderr).toMatch(
        /^ptc: deferred issue_refund \(call_[0-9a-f]{8}:ptc:8\): Refund €159\.00 on order O-1028\?$/m,
      )
      expect(run.stderr).toMatch(/:ptc:8 +issue_refund .* waits for approval \(the program suspended here\)$/m)
      const { token, flags } = resumeHint(run)
      expect(flags).toEqual(['--approve', 'defer'])
      // The folder and what it keeps are the user's alone.
      const folder = join(dir, '.ptc/durable')
      expect(statSync(folder).mode & 0o777).toBe(0o700)
      const kept = readdirSync(folder)
      expect(kept).toContain('secret')
      for (const name of kept) expect(statSync(join(folder, name)).mode & 0o777).toBe(0o600)

      const resumed = await ptc(['resume', token, '--decision', 'allow', '--json', '--session', 'log.jsonl'], {
        cwd: dir,
      })
      expect(resumed.code).toBe(0)
      const report = JSON.parse(resumed.stdout) as {
        ok: boolean
        value: { refundId: string; amountCents: number }
        subCalls: { name: string; isError: boolean }[]
      }
      expect(report.ok).toBe(true)
      expect(report.value).toMatchObject({ refundId: 'R-0001', orderId: 'O-1028', amountCents: 15900 })
      // Only the call it waited on ran again: the program went on where it waited, not from its start.
      expect(report.subCalls.map((call) => [call.name, call.isError])).toEqual([['issue_refund', false]])
      expect(readdirSync(folder).filter((name) => name !== 'secret')).toEqual([])
      // One run_code call in the log, its suspension and resumption in it, the call it waited on after them.
      const log = await ptc(['log', 'log.jsonl'], { cwd: dir })
      expect(log.code).toBe(0)
      expect(log.stdout.match(/^run_code /gm)).toHaveLength(1)
      expect(log.stdout).toContain(`suspended awaiting approval of issue_refund({"orderId":"O-1028"`)
      expect(log.stdout).toMatch(
        new RegExp(`resumed \\(allowed-once\\) — token ${token}\\n.*:ptc:9 issue_refund\\(.* — ok `),
      )

      const again = await ptc(['resume', token, '--decision', 'allow'], { cwd: dir })
      expect(again.code).toBe(2)
      expect(again.stdout).toBe('')
      expect(again.stderr).toContain(
        `ptc: cannot resume ${token}: no suspended program has token "${token}": unknown, expired or already resumed`,
      )
      expect(noStack(again.stderr)).toBe(true)
    } finally {
      cleanup()
    }
  }, 60_000)

  test('in a sandbox session: the session is held until the resume, a rejection reaches the program as DENIED, and the session goes on from what it left', async () => {
    const cwd = files.dir
    const session = ['--session-state', 'refunds']
    const run = await ptc(['run', 'counted-refund.js', '--approve', 'defer', '--json', ...session], { cwd })
    expect(run.code).toBe(3)
    const report = JSON.parse(run.stdout) as {
      value: unknown
      awaiting: { token: string; calls: { tool: string; reason: string }[] }
      session: { note: string }
    }
    expect(report.awaiting.calls).toEqual([{ tool: 'issue_refund', reason: 'refund €1.00 on order O-1028' }])
    expect(report.session.note).toMatch(/^the program suspended: the session waits for its resume/)
    const { token, flags } = resumeHint(run)
    expect(token).toBe(report.awaiting.token)
    expect(flags).toEqual([...session, '--approve', 'defer'])

    // Held: another program of the session does not run.
    const refused = await ptc(['run', 'counted-refund.js', '--approve', 'yes', ...session], { cwd })
    expect(refused.code).toBe(1)
    expect(refused.stdout).toMatch(
      /session "refunds" waits for the resume of a program of it that suspended \(durable approval\).*: this program did not run/,
    )

    const rejected = await ptc(['resume', token, '--decision', 'reject', ...flags], { cwd })
    expect(rejected.code).toBe(0)
    expect(JSON.parse(rejected.stdout)).toEqual({ n: 1, outcome: 'DENIED' })
    expect(rejected.stderr).toMatch(
      /issue_refund .* error DENIED: the decision on its deferred approval rejected this call/,
    )

    const next = await ptc(['run', 'counted-refund.js', '--approve', 'yes', ...session], { cwd })
    expect(next.code).toBe(0)
    expect(JSON.parse(next.stdout)).toEqual({ n: 2, outcome: 'R-0001' })
  }, 60_000)

  test('a resume without the flags the run had is refused and keeps the program; with them it goes on', async () => {
    const { dir, cleanup } = tempDir({ 'counted-refund.js': COUNTED_REFUND })
    try {
      const run = await ptc(
        ['run', 'counted-refund.js', '--approve', 'defer', '--session-state', 's', '--durable-dir', 'waiting'],
        { cwd: dir },
      )
      expect(run.code).toBe(3)
      const { token, flags } = resumeHint(run)
      expect(flags).toEqual(['--session-state', 's', '--durable-dir', 'waiting', '--approve', 'defer'])
      // Another folder: the token is unknown there.
      const elsewhere = await ptc(['resume', token, '--decision', 'allow'], { cwd: dir })
      expect(elsewhere.code).toBe(2)
      expect(elsewhere.stderr).toContain('unknown, expired or already resumed')
      // The right folder, but not the session: its secret sealed the state, so it is refused, and kept.
      const noSession = await ptc(['resume', token, '--decision', 'allow', '--durable-dir', 'waiting'], { cwd: dir })
      expect(noSession.code).toBe(2)
      expect(noSession.stderr).toMatch(
        /was refused \(it stays stored\): snapshot failed authentication.*\(give the --durable-dir, and --session-state and --session-dir if it had them, that the run had\)/,
      )
      const resumed = await ptc(['resume', token, '--decision', 'allow', ...flags], { cwd: dir })
      expect(resumed.code).toBe(0)
      expect(JSON.parse(resumed.stdout)).toEqual({ n: 1, outcome: 'R-0001' })
    } finally {
      cleanup()
    }
  }, 60_000)

  test('a session program resumed without its session (its folder shared with the suspended programs) is refused and kept', async () => {
    const { dir, cleanup } = tempDir({ 'counted-refund.js': COUNTED_REFUND })
    try {
      // One folder for both: the secret is the same, so only the missing session can refuse the resume.
      const shared = ['--session-state', 'one', '--session-dir', 'state', '--durable-dir', 'state']
      const run = await ptc(['run', 'counted-refund.js', '--approve', 'defer', ...shared], { cwd: dir })
      expect(run.code).toBe(3)
      const { token } = resumeHint(run)
      const alone = await ptc(['resume', token, '--decision', 'allow', '--durable-dir', 'state'], { cwd: dir })
      expect(alone.code).toBe(2)
      expect(alone.stderr).toContain(
        'this program ran in sandbox session "one", which waits for it in a session store: resume it on a runtime with that store (sessions.store); nothing ran (give the --durable-dir, and --session-state and --session-dir if it had them, that the run had)',
      )
      const resumed = await ptc(['resume', token, '--decision', 'allow', ...shared], { cwd: dir })
      expect(resumed.code).toBe(0)
      expect(JSON.parse(resumed.stdout)).toEqual({ n: 1, outcome: 'R-0001' })
      const next = await ptc(['run', 'counted-refund.js', '--approve', 'yes', ...shared.slice(0, 4)], { cwd: dir })
      expect(JSON.parse(next.stdout)).toEqual({ n: 2, outcome: 'R-0001' })
    } finally {
      cleanup()
    }
  }, 60_000)

  test('a program that asks again after its resume suspends again, with a new token', async () => {
    const { dir, cleanup } = tempDir()
    try {
      writeFileSync(
        join(dir, 'two.js'),
        `const a = await tools.issue_refund({ orderId: 'O-1028', amountCents: 100, reason: 'one' })
const b = await tools.issue_refund({ orderId: 'O-1028', amountCents: 200, reason: 'two' })
return [a.amountCents, b.amountCents]`,
      )
      const first = await ptc(['run', 'two.js', '--approve', 'defer'], { cwd: dir })
      expect(first.code).toBe(3)
      // As the hint says: the second call waits again (the hint carries --approve defer).
      const second = await ptc(['resume', resumeHint(first).token, '--decision', 'allow', ...resumeHint(first).flags], {
        cwd: dir,
      })
      expect(second.code).toBe(3)
      expect(second.stderr).toContain('waits for an approval of issue_refund (refund €2.00 on order O-1028)')
      expect(resumeHint(second).token).not.toBe(resumeHint(first).token)
      const last = await ptc(['resume', resumeHint(second).token, '--decision', 'allow'], { cwd: dir })
      expect(last.code).toBe(0)
      expect(JSON.parse(last.stdout)).toEqual([100, 200])
    } finally {
      cleanup()
    }
  }, 60_000)

  test('usage: isolated-vm cannot suspend; resume needs a token and a decision, and refuses what cannot be one', async () => {
    const vm = await ptc(['run', refundDamaged, '--approve', 'defer', '--sandbox', 'isolated-vm'])
    expect(vm.code).toBe(2)
    expect(vm.stderr).toBe(
      'ptc: a program that waits for an approval (--approve defer, --durable-dir, ptc resume) needs the quickjs sandbox; isolated-vm cannot suspend one\n',
    )
    expect((await ptc(['resume'])).stderr).toBe(
      'ptc: missing token (printed by ptc run --approve defer); see `ptc resume --help`\n',
    )
    expect((await ptc(['resume', 'tok'])).stderr).toBe(
      'ptc: missing --decision allow or --decision reject; see `ptc resume --help`\n',
    )
    const twice = await ptc(['resume', 'tok', '--decision', 'reject', '--decision', 'allow'])
    expect(twice.code).toBe(2)
    expect(twice.stderr).toBe(
      'ptc: --decision is given twice ("reject", then "allow"): give it once; see `ptc resume --help`\n',
    )
    const bad = await ptc(['resume', 'tok', '--decision', 'maybe'])
    expect(bad.code).toBe(2)
    expect(bad.stderr).toBe('ptc: --decision must be one of allow, reject, not "maybe"\n')
    // Tokens no folder could hold: refused as unknown, one line, no stack.
    const { dir, cleanup } = tempDir()
    try {
      for (const token of ['', 'x'.repeat(5_000), '../../etc/passwd']) {
        const refused = await ptc(['resume', token, '--decision', 'allow'], { cwd: dir })
        expect(refused.code).toBe(2)
        expect(refused.stderr).toMatch(/^ptc: cannot resume .*: no suspended program has token "/m)
        expect(noStack(refused.stderr)).toBe(true)
      }
    } finally {
      cleanup()
    }
  }, 60_000)
})
