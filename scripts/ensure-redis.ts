/**
 * Finds `redis-server` for the tests that run a real one, and installs it when it is missing and this
 * process can: root, with apt-get (`apt-get install -y redis-server`, after `apt-get update` if the
 * first try fails). The package's own service is kept from starting (a `policy-rc.d` that refuses, for
 * the install only, unless one is there): the tests start their own server on a free loopback port.
 *
 *   node --import tsx scripts/ensure-redis.ts    prints the path, or why there is none (exit 1)
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { accessSync, constants, existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { delimiter, join } from 'node:path'
import { fileURLToPath } from 'node:url'

/** The path of `redis-server`, or the reason it cannot be had. */
export type RedisServerLookup = { path: string } | { reason: string }

const POLICY = '/usr/sbin/policy-rc.d'

/** Finds `redis-server` on PATH (and in /usr/sbin, /usr/bin), installing it with apt-get when possible. */
export function ensureRedisServer(): RedisServerLookup {
  const found = findRedisServer()
  if (found !== undefined) return { path: found }
  if (process.platform !== 'linux' || process.getuid?.() !== 0)
    return { reason: 'redis-server is not installed, and this process is not root on Linux to install it' }
  const aptGet = findExecutable('apt-get')
  if (aptGet === undefined) return { reason: 'redis-server is not installed, and there is no apt-get to install it' }
  const ownPolicy = !existsSync(POLICY)
  if (ownPolicy)
    writeFileSync(POLICY, '#!/bin/sh\n# written by ptc scripts/ensure-redis.ts during an install\nexit 101\n', {
      mode: 0o755,
    })
  try {
    let install = apt(aptGet, ['install', '-y', '--no-install-recommends', 'redis-server'])
    if (install.status !== 0) {
      apt(aptGet, ['update'])
      install = apt(aptGet, ['install', '-y', '--no-install-recommends', 'redis-server'])
    }
    const path = findRedisServer()
    if (path !== undefined) return { path }
    return { reason: `apt-get install redis-server failed (exit ${install.status}): ${install.output.slice(-400)}` }
  } finally {
    if (ownPolicy) rmSync(POLICY, { force: true })
  }
}

function apt(aptGet: string, args: string[]): { status: number | null; output: string } {
  const run = spawnSync(aptGet, ['-o', 'DPkg::Lock::Timeout=120', ...args], {
    encoding: 'utf8',
    env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
    stdio: ['ignore', 'pipe', 'pipe'],
    timeout: 240_000,
  })
  return { status: run.status, output: `${run.stdout ?? ''}${run.stderr ?? ''}` }
}

function findRedisServer(): string | undefined {
  return findExecutable('redis-server', ['/usr/sbin', '/usr/bin', '/usr/local/bin'])
}

function findExecutable(name: string, extra: readonly string[] = []): string | undefined {
  for (const dir of [...(process.env.PATH ?? '').split(delimiter), ...extra]) {
    if (dir === '') continue
    const candidate = join(dir, name)
    try {
      accessSync(candidate, constants.X_OK)
      return candidate
    } catch {
      // not here
    }
  }
  return undefined
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const lookup = ensureRedisServer()
  if ('path' in lookup) console.log(lookup.path)
  else {
    console.error(lookup.reason)
    process.exitCode = 1
  }
}

/** A redis-server started by `startRedis`. */
export interface RedisServer {
  port: number
  password: string
  stop(): Promise<void>
}

/** A free loopback port (another process may take it before redis-server does: the caller retries). */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer()
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const address = server.address()
      server.close(() =>
        typeof address === 'object' && address !== null ? resolve(address.port) : reject(new Error('no port')),
      )
    })
  })
}

/** Starts redis-server on loopback with a random password, no persistence, in a temporary folder. */
export async function startRedis(path: string): Promise<RedisServer> {
  const dir = mkdtempSync(join(tmpdir(), 'ptc-redis-'))
  const password = randomBytes(24).toString('hex')
  let lastOutput = ''
  for (let attempt = 0; attempt < 5; attempt++) {
    const port = await freePort()
    // The configuration goes in on stdin (`redis-server -`), so the password is not in the process list.
    const config = [
      `port ${port}`,
      'bind 127.0.0.1',
      `requirepass ${password}`,
      `save ""`,
      'appendonly no',
      `dir ${dir}`,
      'protected-mode yes',
      'loglevel notice',
    ].join('\n')
    const child = spawn(path, ['-'], { stdio: ['pipe', 'pipe', 'pipe'] })
    child.stdin.end(`${config}\n`)
    const ready = await new Promise<boolean>((resolve) => {
      let output = ''
      const onData = (chunk: Buffer): void => {
        output += chunk.toString()
        lastOutput = output
        if (output.includes('Ready to accept connections')) resolve(true)
      }
      child.stdout.on('data', onData)
      child.stderr.on('data', onData)
      child.once('exit', () => resolve(false))
      child.once('error', () => resolve(false))
    })
    if (ready) return { port, password, stop: () => stopServer(child, dir) }
    child.kill('SIGKILL')
  }
  rmSync(dir, { recursive: true, force: true })
  throw new Error(`redis-server did not start: ${lastOutput.slice(-500)}`)
}

async function stopServer(child: ChildProcess, dir: string): Promise<void> {
  if (child.exitCode === null && child.signalCode === null) {
    const exited = new Promise((resolve) => child.once('exit', resolve))
    child.kill('SIGTERM')
    await exited
  }
  rmSync(dir, { recursive: true, force: true })
}
