#!/usr/bin/env node
/**
 * The `ptc` binary. isolated-vm needs node to run with `--no-node-snapshot`
 * (Node 20+): when `isolated-vm` is asked for and the flag is missing, the
 * binary starts itself again with the flag and passes the exit status on.
 */
import { spawn } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { processIo } from './io.js'
import { main } from './main.js'

const argv = process.argv.slice(2)
const FLAG = '--no-node-snapshot'
const wantsIsolatedVm = argv.some((arg) => arg === 'isolated-vm' || arg.endsWith('=isolated-vm'))
const hasFlag = process.execArgv.includes(FLAG) || (process.env['NODE_OPTIONS'] ?? '').split(/\s+/).includes(FLAG)

if (wantsIsolatedVm && !hasFlag && process.env['PTC_REEXEC'] !== '1') {
  const child = spawn(process.execPath, [FLAG, ...process.execArgv, fileURLToPath(import.meta.url), ...argv], {
    stdio: 'inherit',
    env: { ...process.env, PTC_REEXEC: '1' },
  })
  const forward = (signal: NodeJS.Signals): void => void child.kill(signal)
  process.on('SIGINT', forward)
  process.on('SIGTERM', forward)
  child.on('error', (error) => {
    process.stderr.write(`ptc: cannot restart node with ${FLAG}: ${error.message}\n`)
    process.exitCode = 2
  })
  child.on('exit', (code, signal) => {
    process.exitCode = code ?? (signal === null ? 1 : 128 + 2)
  })
} else {
  process.exitCode = await main(argv, processIo())
}
