import { spawn } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { expect, test } from 'vitest'
import { claimHolder, claimHolderGone } from './holder.js'
import { checkHolder } from './store.js'

test('a holder id names this process; only a process of this machine that has exited counts as gone', async () => {
  const mine = claimHolder('quickjs')
  expect(() => checkHolder(mine)).not.toThrow()
  expect(mine).toContain(`-${process.pid}-`)
  expect(claimHolderGone(mine)).toBe(false)
  // Another holder in this same process (another runtime) is alive too.
  expect(claimHolderGone(claimHolder('other'))).toBe(false)
  const child = spawn(
    process.execPath,
    ['-e', 'process.stdin.resume(); process.stdin.on("end", () => process.exit(0))'],
    { stdio: ['pipe', 'ignore', 'inherit'] },
  )
  const exited = new Promise((resolve) => child.once('exit', resolve))
  const theirs = mine.replace(`-${process.pid}-`, `-${child.pid}-`)
  const place = /^quickjs-(.+)-\d+-[0-9a-f]+$/.exec(mine)?.[1]
  if (place === 'x') {
    // Off Linux (no /proc): nobody is ever taken for gone.
    child.stdin.end()
    await exited
    expect(claimHolderGone(theirs)).toBe(false)
    return
  }
  expect(claimHolderGone(theirs)).toBe(false)
  child.stdin.end()
  await exited
  expect(claimHolderGone(theirs)).toBe(true)
  // Another machine or PID namespace, another format, a holder id of nobody's: never gone.
  expect(claimHolderGone(theirs.replace(place as string, '0123456789abcdef.1'))).toBe(false)
  expect(claimHolderGone(theirs.replace(/-\d+-/, '-x-'))).toBe(false)
  expect(claimHolderGone(`quickjs-x-${child.pid}-00`)).toBe(false)
  expect(claimHolderGone('holder-a')).toBe(false)
})

test('a holder that exited but was never reaped (a zombie: its parent never waits, as in a container without an init) counts as gone', async () => {
  const mine = claimHolder('quickjs')
  if (mine.includes('-x-')) return // off Linux: nobody is ever taken for gone
  // The shell starts a child, then becomes `sleep` (the same process), which never reaps it.
  const parent = spawn('sh', ['-c', 'sleep 120 & echo $!; exec sleep 120'], { stdio: ['ignore', 'pipe', 'inherit'] })
  try {
    const pid = await new Promise<number>((resolve) =>
      parent.stdout.once('data', (chunk: Buffer) => resolve(Number(chunk.toString().trim()))),
    )
    // Once the shell is `sleep`, nothing will reap the child: it is killed, and stays a zombie.
    while (!readFileSync(`/proc/${parent.pid}/cmdline`, 'latin1').startsWith('sleep'))
      await new Promise((resolve) => setTimeout(resolve, 10))
    const theirs = mine.replace(`-${process.pid}-`, `-${pid}-`)
    expect(claimHolderGone(theirs)).toBe(false)
    process.kill(pid, 'SIGKILL')
    while (!/^[ZX]/.test(readFileSync(`/proc/${pid}/stat`, 'latin1').replace(/^.*\) /s, '')))
      await new Promise((resolve) => setTimeout(resolve, 10))
    expect(() => process.kill(pid, 0)).not.toThrow() // it still exists, as a zombie
    expect(claimHolderGone(theirs)).toBe(true)
  } finally {
    parent.kill('SIGKILL')
  }
})
