import { spawn } from 'node:child_process'
import { existsSync, statSync } from 'node:fs'
import { dirname, join } from 'node:path'
import type { BenchScript } from './scripts.js'

/** The comparison with the other PTC runtimes (`ptc bench --peers`); it passes `--backend` on. */
export const PEERS_SCRIPT: BenchScript = { path: 'bench/peers/peers.ts', backend: undefined, filters: true }

/** The npm project of the peers: outside the pnpm workspace, installed on demand (bench/peers/README.md). */
export const PEERS_DIR = 'bench/peers'

/**
 * `installed` when `npm ci` has installed the committed lock: npm's record of the install
 * (`node_modules/.package-lock.json`) exists and is not older than `package-lock.json`.
 */
export function peersInstallState(root: string): 'installed' | 'missing' | 'stale' {
  const lock = join(root, PEERS_DIR, 'package-lock.json')
  const record = join(root, PEERS_DIR, 'node_modules', '.package-lock.json')
  if (!existsSync(record)) return 'missing'
  return existsSync(lock) && statSync(record).mtimeMs < statSync(lock).mtimeMs ? 'stale' : 'installed'
}

/**
 * The environment for `npm ci`: isolated-vm 5.0.4 compiles from source when no prebuilt binary can be
 * downloaded, against the running Node's headers when they are installed beside it (as .ci/run does), rather
 * than headers node-gyp would download.
 */
export function installEnv(env: NodeJS.ProcessEnv, execPath = process.execPath): NodeJS.ProcessEnv {
  if (env.npm_config_nodedir !== undefined) return env
  const prefix = dirname(dirname(execPath))
  return existsSync(join(prefix, 'include', 'node', 'node.h')) ? { ...env, npm_config_nodedir: prefix } : env
}

export interface PeersInstall {
  readonly ok: boolean
  readonly seconds: number
  /** npm's output (stdout and stderr), or why npm could not start. */
  readonly output: string
}

/** `npm ci` in bench/peers: exactly the versions of the committed lock. */
export function installPeers(root: string): Promise<PeersInstall> {
  const started = performance.now()
  return new Promise((resolve) => {
    const child = spawn('npm', ['ci', '--no-audit', '--no-fund'], {
      cwd: join(root, PEERS_DIR),
      env: installEnv(process.env),
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    const out: Buffer[] = []
    child.stdout.on('data', (chunk: Buffer) => out.push(chunk))
    child.stderr.on('data', (chunk: Buffer) => out.push(chunk))
    const finish = (ok: boolean, extra = ''): void =>
      resolve({
        ok,
        seconds: (performance.now() - started) / 1000,
        output: Buffer.concat(out).toString('utf8') + extra,
      })
    child.on('error', (error) => finish(false, `cannot run npm: ${error.message}`))
    child.on('close', (code) => finish(code === 0))
  })
}
