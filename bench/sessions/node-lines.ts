/**
 * Suspend and resume of a QuickJS session holding about 10 MiB of program data, on two Node lines: this machine's
 * Node 20 (sealed with brotli, format 2) against Node 24 (zstd, format 3), in fresh processes, interleaved. Each
 * process measures suspend (encode to byte planes + seal) and resume (open + decode), and the seal and open of the
 * same payload alone (the codec and HMAC, without the planes and copies), medians of 7.
 *
 *   node --import tsx bench/sessions/node-lines.ts [--rounds 3]
 *
 * Node 24 comes from `scripts/node-line.ts 24` (the cached copy, or the registry through npm).
 */
import { spawnSync } from 'node:child_process'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

const ROOT = fileURLToPath(new URL('../..', import.meta.url))
const MiB = 1024 * 1024
const REPEATS = 7

interface Figures {
  node: string
  format: number
  state: number
  sealed: number
  suspend: number
  resume: number
  seal: number
  open: number
}

const median = (values: number[]): number => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.floor(sorted.length / 2)] as number
}

/** One process's figures (run with `--child`). */
async function child(): Promise<Figures> {
  const { createQuickJSRuntime } = await import('@ptc/sandbox-quickjs')
  const secret = 'bench-secret-0123456789abcdef'
  const runtime = createQuickJSRuntime({
    isolation: 'inline',
    sessions: { secret, maxSessionBytes: 512 * MiB },
    limits: { memoryBytes: 512 * MiB },
  })
  const run = (code: string, session: string) =>
    runtime.run({ code, language: 'javascript', bindings: [], call: async () => null, session })
  const made = await run(
    `const n = Math.round(10 * 1048576 / 80)
globalThis.data = Array.from({ length: n }, (_, i) => ({ id: i, name: 'item-' + i, tags: i % 3 === 0 ? ['a', 'b'] : ['c'], price: i * 1.25, ok: i % 2 === 0 }))
return 1`,
    'k',
  )
  if (made.error !== undefined || made.session === undefined) throw new Error(made.error?.message ?? 'no session')
  const suspend: number[] = []
  const resume: number[] = []
  let bytes: Uint8Array = new Uint8Array(0)
  for (let i = 0; i < REPEATS; i++) {
    let t = performance.now()
    bytes = (await runtime.suspendSession?.('k')) as Uint8Array
    suspend.push(performance.now() - t)
    t = performance.now()
    await runtime.resumeSession?.('k', bytes)
    resume.push(performance.now() - t)
  }
  // The sealed payload alone, sealed and opened again: the codec and the HMAC, without the byte planes and copies.
  const { openSnapshotAsync, sealSnapshotAsync } = await import('@ptc/sandbox/session')
  const { sessionBuild } = await import('../../sandbox/quickjs/src/host/session-snapshot.js')
  const identity = { build: await sessionBuild('quickjs'), session: 'k' }
  const payload = await openSnapshotAsync(bytes, identity, secret)
  const seal: number[] = []
  const open: number[] = []
  for (let i = 0; i < REPEATS; i++) {
    let t = performance.now()
    const sealed = await sealSnapshotAsync(payload, identity, secret)
    seal.push(performance.now() - t)
    t = performance.now()
    await openSnapshotAsync(sealed, identity, secret)
    open.push(performance.now() - t)
  }
  await runtime.dispose()
  return {
    seal: median(seal),
    open: median(open),
    node: process.version,
    format: Buffer.from(bytes).readUInt16BE(4),
    state: made.session.bytes,
    sealed: bytes.byteLength,
    suspend: median(suspend),
    resume: median(resume),
  }
}

function main(): void {
  const at = process.argv.indexOf('--rounds')
  const rounds = at === -1 ? 3 : Number(process.argv[at + 1])
  const line = spawnSync(process.execPath, ['--import', 'tsx', join(ROOT, 'scripts/node-line.ts'), '24'], {
    cwd: ROOT,
    encoding: 'utf8',
  })
  if (line.status !== 0) throw new Error(`could not get Node 24: ${line.stderr}`)
  const nodes = [process.execPath, join(line.stdout.trim(), 'node')]
  const results = new Map<string, Figures[]>()
  for (let round = 0; round < rounds; round++) {
    for (const bin of round % 2 === 0 ? nodes : [...nodes].reverse()) {
      const out = spawnSync(
        bin,
        ['--conditions=@ptc/source', '--import', 'tsx', fileURLToPath(import.meta.url), '--child'],
        { cwd: ROOT, encoding: 'utf8', maxBuffer: 16 * MiB },
      )
      if (out.status !== 0) throw new Error(`${bin}: ${out.stderr}`)
      const figures = JSON.parse(out.stdout.trim().split('\n').at(-1) as string) as Figures
      results.set(figures.node, [...(results.get(figures.node) ?? []), figures])
    }
  }
  const cell = (list: Figures[], key: keyof Figures): string => {
    const values = list.map((f) => f[key] as number)
    return `${median(values).toFixed(1)} (${Math.min(...values).toFixed(1)}-${Math.max(...values).toFixed(1)})`
  }
  console.log(
    '| Node | format | state | sealed | sealed / state | suspend ms | resume ms | seal alone ms | open alone ms |',
  )
  console.log('|---|---|---|---|---|---|---|---|---|')
  for (const [node, list] of results) {
    const first = list[0] as Figures
    console.log(
      `| ${node} | ${first.format} | ${(first.state / MiB).toFixed(1)} MiB | ${(first.sealed / MiB).toFixed(2)} MiB | ` +
        `${((first.sealed / first.state) * 100).toFixed(1)}% | ${cell(list, 'suspend')} | ${cell(list, 'resume')} | ` +
        `${cell(list, 'seal')} | ${cell(list, 'open')} |`,
    )
  }
}

if (process.argv.includes('--child')) console.log(JSON.stringify(await child()))
else main()
