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
