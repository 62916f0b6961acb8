/**
 * `ptc serve` over stdio, stopped by a signal while a program waits on an upstream call: it shuts down as when
 * its client leaves (the upstreams it spawned are stopped, the session log is closed whole) and exits 0. Before,
 * SIGTERM and SIGINT killed it outright and left its upstream processes running.
 */
import { existsSync } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { readJsonlSession } from '@ptc/tools/session'
import { afterEach, describe, expect, test } from 'vitest'
import { until } from './http-helpers.js'
import { alive, fixture, killFixture, readPid, spawnServe, tsNode } from './serve-process.js'

let dir: string | undefined
afterEach(async () => {
  if (dir !== undefined) await rm(dir, { recursive: true, force: true })
  dir = undefined
})

describe.each(['SIGTERM', 'SIGINT'] as const)('ptc serve (stdio) on %s', (signal) => {
  test('stops the upstream it spawned, writes its session log whole, and exits 0', async () => {
    dir = await mkdtemp(join(tmpdir(), 'ptc-serve-signal-'))
    const pidFile = join(dir, 'fixture.pid')
    const sessionFile = join(dir, 'session.jsonl')
    const serve = spawnServe([
      '--upstream',
      `slow=node ${tsNode.join(' ')} ${fixture} --pid-file ${pidFile}`,
      '--session',
      sessionFile,
    ])
    try {
      await serve.initialize()
      serve.send({
        jsonrpc: '2.0',
        id: 2,
        method: 'tools/call',
        params: {
          name: 'run_code',
          arguments: { code: 'return await tools["slow.sleep"]({ ms: 60000 })', description: 'waits' },
        },
      })
      await until(() => existsSync(`${pidFile}.sleeping`), 20_000)
      const upstream = await readPid(pidFile)
      expect(alive(upstream)).toBe(true)

      serve.child.kill(signal)
      expect(await serve.exited).toEqual({ code: 0, signal: null })
      await until(() => !alive(upstream), 10_000)
      // The log holds the call that was waiting, started and settled, and no partial line.
      const log = await readJsonlSession(sessionFile)
      expect(log.partialTail).toBeUndefined()
      const types = log.events.map((event) => event.type)
      expect(types).toContain('tool/ptc-dispatch-start')
      expect(types).toContain('tool/ptc-dispatch')
    } finally {
      serve.kill()
      if (existsSync(pidFile)) killFixture(await readPid(pidFile, 1000).catch(() => 0))
    }
    expect(serve.stderr()).toContain('ready (stdio')
  }, 120_000)
})
