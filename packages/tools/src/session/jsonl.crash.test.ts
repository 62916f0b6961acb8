import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import os from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, expect, test } from 'vitest'
import { JsonlSession } from './jsonl.js'
import { parseJsonl } from './read.js'

const fixture = fileURLToPath(new URL('./fixtures/append-forever.ts', import.meta.url))
const repoRoot = fileURLToPath(new URL('../../../../', import.meta.url))
/** 4 MiB events: on ext4 a SIGKILL then lands mid-write most of the time (256 KiB almost never). */
const EVENT_BYTES = 4 * 1024 * 1024

let dir = ''
beforeAll(async () => {
  dir = await mkdtemp(join(os.tmpdir(), 'ptc-jsonl-crash-'))
})
afterAll(async () => {
  await rm(dir, { recursive: true, force: true })
})

/** Runs the fixture until it has acknowledged `minAcks` appends, waits `delayMs`, then SIGKILLs it. */
async function killMidRun(file: string, minAcks: number, delayMs: number): Promise<number[]> {
  const child = spawn(process.execPath, ['--import', 'tsx', fixture, file, String(EVENT_BYTES)], {
    cwd: repoRoot,
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  const exited = once(child, 'exit')
  let stdout = ''
  let stderr = ''
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()))
  await new Promise<void>((resolve, reject) => {
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString()
      if ((stdout.match(/^ack /gm) ?? []).length >= minAcks) resolve()
    })
    void exited.then(() => reject(new Error(`fixture exited early: ${stderr}`)))
  })
  await new Promise((resolve) => setTimeout(resolve, delayMs))
  child.kill('SIGKILL')
  await exited
  // Only acknowledgements printed before the kill (complete `ack N\n` lines) count.
  return [...stdout.matchAll(/^ack (\d+)\n/gm)].map((m) => Number(m[1]))
}

test('a child killed mid-write loses at most the event being written, and reopening repairs the file', async ({
  annotate,
}) => {
  const delays = [0, 3, 7, 13, 29, 1, 5, 11, 17, 23]
  let partialTails = 0
  let runs = 0
  // At least 5 kills; keep going (up to 10) until one of them landed mid-write.
  for (const [i, delayMs] of delays.entries()) {
    if (runs >= 5 && partialTails > 0) break
    runs++
    const file = join(dir, `run-${i}.jsonl`)
    const acked = await killMidRun(file, 1 + (i % 3), delayMs)

    const after = parseJsonl(await readFile(file))
    expect(after.invalidLines).toEqual([]) // every complete line parses
    const seqs = after.events.map((e) => e.seq)
    expect(seqs).toEqual(seqs.map((_, n) => n)) // in order, no gaps
    expect(seqs.length).toBeGreaterThanOrEqual(Math.max(0, ...acked) + 1) // acknowledged => on disk
    if (after.partialTail !== undefined) partialTails++

    const session = await JsonlSession.open(file)
    expect(session.repaired?.truncatedBytes).toBe(after.partialTail?.bytes)
    await session.append({ type: 'after-crash', time: Date.now() })
    await session.close()

    const repaired = parseJsonl(await readFile(file))
    expect(repaired.invalidLines).toEqual([])
    expect(repaired.partialTail).toBeUndefined()
    expect(repaired.events).toHaveLength(seqs.length + 1)
    expect(repaired.events.at(-1)?.type).toBe('after-crash')
    await rm(file)
  }
  await annotate(`${partialTails} of ${runs} kills landed mid-write (partial last line)`)
  // How often a kill lands mid-write depends on the kernel and file system (often on ext4, rarely on tmpfs).
  if (partialTails === 0) console.warn(`jsonl crash test: no kill out of ${runs} landed mid-write on ${dir}`)
}, 120_000)
