import { spawn } from 'node:child_process'
import { createRequire } from 'node:module'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { describe, expect, test } from 'vitest'
import { isolatedVmAvailability } from './index.js'
import { isAlive, sleep } from './test-helpers.js'

const availability = isolatedVmAvailability()
const tsx = pathToFileURL(createRequire(import.meta.url).resolve('tsx/esm')).href
const fixture = fileURLToPath(new URL('./fixtures/runtime-host.ts', import.meta.url))

/** Starts the fixture host; resolves with its first stdout line (parsed), its stderr and its exit. */
function startHost(mode: 'exit' | 'wait') {
  const child = spawn(
    process.execPath,
    ['--no-node-snapshot', '--conditions=@ptc/source', '--import', tsx, fixture, mode],
    {
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  )
  let stderr = ''
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk))
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('exit', (code, signal) => resolve({ code, signal })),
  )
  const line = new Promise<{ pids: number[]; bomb: string }>((resolve, reject) => {
    let out = ''
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      out += chunk
      const nl = out.indexOf('\n')
      if (nl !== -1) resolve(JSON.parse(out.slice(0, nl)) as { pids: number[]; bomb: string })
    })
    void exited.then(() => reject(new Error(`host exited before reporting: ${stderr}`)))
  })
  return { child, line, exited, stderr: () => stderr }
}

async function allGone(pids: readonly number[], withinMs: number): Promise<boolean> {
  for (let t = 0; t < withinMs; t += 100) {
    if (pids.every((pid) => !isAlive(pid))) return true
    await sleep(100)
  }
  return pids.every((pid) => !isAlive(pid))
}

describe.skipIf(!availability.available)('engine child processes never outlive their host', () => {
  test('process.exit() with a guest stuck in a sort exits cleanly, kills the children and prints no V8 dump', async () => {
    const host = startHost('exit')
    const { pids, bomb } = await host.line
    expect(bomb).toBe('memory')
    expect(pids.length).toBeGreaterThan(0)
    expect(await host.exited).toEqual({ code: 0, signal: null })
    expect(await allGone(pids, 2000)).toBe(true)
    expect(host.stderr()).not.toMatch(/Heap statistics|Last few GCs|FATAL|out of memory/i)
  }, 60_000)

  test('a host killed with SIGKILL leaves no orphan: the children exit when their channel closes', async () => {
    const host = startHost('wait')
    const { pids } = await host.line
    expect(pids.length).toBeGreaterThan(0)
    host.child.kill('SIGKILL')
    await host.exited
    expect(await allGone(pids, 3000)).toBe(true)
  }, 60_000)
})
