/**
 * Session bytes across Node lines (issue 51): a Node with zstd (22.15 and later) seals format 3, one without seals
 * format 2 (brotli). Bytes from a Node without zstd resume on one with it; the other way is a clear error. Needs this
 * Node and one of the other kind (the system's, or one `scripts/node-line.ts` cached); skipped, saying so, otherwise.
 */
import { spawn, spawnSync } from 'node:child_process'
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, describe, expect, test } from 'vitest'

const ROOT = fileURLToPath(new URL('../../..', import.meta.url))
const REPLICA = fileURLToPath(new URL('./fixtures/session-replica.ts', import.meta.url))
const dir = mkdtempSync(join(tmpdir(), 'ptc-session-node-lines-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

/** Node binaries on this machine: this one, the system's, the ones `scripts/node-line.ts` cached. */
function nodes(): string[] {
  const cache = process.env.PTC_NODE_CACHE ?? join(ROOT, 'node_modules/.cache/ptc-node')
  const cached = existsSync(cache) ? readdirSync(cache).map((v) => join(cache, v, 'package/bin/node')) : []
  return [process.execPath, '/usr/bin/node', '/usr/local/bin/node', ...cached].filter((bin) => existsSync(bin))
}

/** Whether `bin` has zstd in `node:zlib`, with its version; undefined when it does not run. */
function probe(bin: string): { zstd: boolean; version: string } | undefined {
  const out = spawnSync(bin, ['-p', `process.version + ' ' + typeof require('node:zlib').zstdCompressSync`], {
    encoding: 'utf8',
  })
  if (out.status !== 0) return undefined
  const [version = '', kind] = out.stdout.trim().split(' ')
  return { zstd: kind === 'function', version }
}

const probed = nodes().flatMap((bin) => {
  const found = probe(bin)
  return found === undefined ? [] : [{ bin, ...found }]
})
const withZstd = probed.find((n) => n.zstd)
const withoutZstd = probed.find((n) => !n.zstd)
const missing =
  withZstd === undefined
    ? 'no Node with zstd here (run: node --import tsx scripts/node-line.ts 24)'
    : withoutZstd === undefined
      ? 'no Node without zstd here (Node 20)'
      : undefined
if (missing !== undefined) console.warn(`session-node-lines.test.ts: skipped: ${missing}`)

/** Runs the replica fixture with `bin`: its exit code, output and error output. */
function replica(bin: string, args: string[]): Promise<{ code: number | null; out: string; err: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(bin, ['--conditions=@ptc/source', '--import', 'tsx', REPLICA, ...args], {
      cwd: ROOT,
      env: {
        ...process.env,
        PTC_SECRET: 'a-secret-of-the-session-node-lines-test',
        PTC_STORE_DIR: dir,
        PTC_ISOLATION: 'inline',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let out = ''
    let err = ''
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()))
    child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()))
    child.on('error', reject)
    child.on('close', (code) => resolve({ code, out, err }))
  })
}

/** Seals session `key` holding `n` with `bin`: the sealed bytes' file and format version. */
async function sealWith(bin: string, key: string, n: number): Promise<{ file: string; version: number }> {
  const file = join(dir, `${key}.bytes`)
  await replica(bin, ['suspend-and-die', key, `globalThis.n = ${n}; return n`, file])
  return { file, version: readFileSync(file).readUInt16BE(4) }
}

describe.skipIf(missing !== undefined)('session bytes across Node lines', () => {
  const [zstd, brotli] = [withZstd?.bin ?? '', withoutZstd?.bin ?? '']

  test('bytes sealed without zstd (format 2) resume on a Node with zstd', async () => {
    const { file, version } = await sealWith(brotli, 'old', 20)
    expect(version).toBe(2)
    const resumed = await replica(zstd, ['resume', 'old', file, 'return n + 1'])
    expect(JSON.parse(resumed.out), resumed.err).toMatchObject({ value: 21 })
  }, 120_000)

  test('bytes sealed with zstd (format 3) resume there, and a Node without zstd says which Node can', async () => {
    const { file, version } = await sealWith(zstd, 'new', 24)
    expect(version).toBe(3)
    const resumed = await replica(zstd, ['resume', 'new', file, 'return n + 1'])
    expect(JSON.parse(resumed.out), resumed.err).toMatchObject({ value: 25 })
    const refused = await replica(brotli, ['resume', 'new', file, 'return n + 1'])
    expect(refused.code).not.toBe(0)
    expect(refused.err).toContain(
      `snapshot format version 3 is compressed with zstd, which Node ${withoutZstd?.version} lacks (Node 22.15 and ` +
        'later have it): resume it on such a Node',
    )
  }, 120_000)
})
