import { spawn } from 'node:child_process'
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
  const child = spawn(process.execPath, ['-e', 'process.stdin.resume(); process.stdin.on("end", () => process.exit(0))'], { stdio: ['pipe', 'ignore', 'inherit'] })
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
  // The shell starts a child that exits at once, then becomes `sleep` (same process), which never reaps it.
  const parent = spawn('sh', ['-c', 'sh -c "exit 0" & echo $!; exec sleep 60'], { stdio: ['ignore', 'pipe', 'inherit'] })
  try {
    const pid = await new Promise<number>((resolve) => parent.stdout.once('data', (chunk: Buffer) => resolve(Number(chunk.toString().trim()))))
    const theirs = mine.replace(`-${process.pid}-`, `-${pid}-`)
    // Exited by now or soon: a zombie until its parent ends.
    let gone = false
    for (let i = 0; i < 1000 && !gone; i++) {
      gone = claimHolderGone(theirs)
      if (!gone) await new Promise((resolve) => setTimeout(resolve, 10))
    }
    expect(gone).toBe(true)
    expect(() => process.kill(pid, 0)).not.toThrow() // it still exists, as a zombie
  } finally {
    parent.kill('SIGKILL')
  }
})
