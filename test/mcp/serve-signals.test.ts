/**
 * `ptc serve` over stdio, stopped by a signal while a program waits on an upstream call: it shuts down as when
 * its client leaves (the upstreams it spawned are stopped, the session log is closed whole) and exits 0. Before,
 * SIGTERM and SIGINT killed it outright and left its upstream processes running.
 */
import { spawn } from 'node:child_process'
import { existsSync } from 'node:fs'
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { readJsonlSession } from '@ptc/tools/session'
import { afterEach, describe, expect, test } from 'vitest'
import { INITIALIZE, until } from './http-helpers.js'

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..')
const tsNode = ['--conditions=@ptc/source', '--import', 'tsx']
const fixture = join(root, 'packages/mcp/src/testing/fixture-server.ts')

let dir: string | undefined
afterEach(async () => {
  if (dir !== undefined) await rm(dir, { recursive: true, force: true })
  dir = undefined
})

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

describe.each(['SIGTERM', 'SIGINT'] as const)('ptc serve (stdio) on %s', (signal) => {
  test('stops the upstream it spawned, writes its session log whole, and exits 0', async () => {
    dir = await mkdtemp(join(tmpdir(), 'ptc-serve-signal-'))
    const pidFile = join(dir, 'fixture.pid')
    const sessionFile = join(dir, 'session.jsonl')
    const serve = spawn(process.execPath, [...tsNode, join(root, 'packages/mcp/src/bin.ts'), '--upstream', `slow=node ${tsNode.join(' ')} ${fixture} --pid-file ${pidFile}`, '--session', sessionFile], {
      cwd: root,
      stdio: ['pipe', 'pipe', 'pipe'],
    })
    let stdout = ''
    let stderr = ''
    serve.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()))
    serve.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()))
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((done) => serve.once('exit', (code, sig) => done({ code, signal: sig })))
    const send = (message: unknown): void => void serve.stdin.write(`${JSON.stringify(message)}\n`)
    try {
      send(INITIALIZE)
      await until(() => stdout.includes('"id":1'), 20_000)
      send({ jsonrpc: '2.0', method: 'notifications/initialized' })
      send({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'run_code', arguments: { code: 'return await tools["slow.sleep"]({ ms: 60000 })', description: 'waits' } } })
      await until(() => existsSync(`${pidFile}.sleeping`), 20_000)
      const upstream = Number(await readFile(pidFile, 'utf8'))
      expect(alive(upstream)).toBe(true)

      serve.kill(signal)
      expect(await exited).toEqual({ code: 0, signal: null })
      await until(() => !alive(upstream), 10_000)
      // The log holds the call that was waiting, started and settled, and no partial line.
      const log = await readJsonlSession(sessionFile)
      expect(log.partialTail).toBeUndefined()
      const types = log.events.map((event) => event.type)
      expect(types).toContain('tool/ptc-dispatch-start')
      expect(types).toContain('tool/ptc-dispatch')
    } finally {
      if (serve.exitCode === null && serve.signalCode === null) serve.kill('SIGKILL')
      const upstream = existsSync(pidFile) ? Number(await readFile(pidFile, 'utf8')) : undefined
      if (upstream !== undefined && alive(upstream)) process.kill(upstream, 'SIGKILL')
    }
    expect(stderr).toContain('ready (stdio')
  }, 60_000)
})
