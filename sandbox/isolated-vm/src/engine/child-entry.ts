/**
 * The entry of an engine child process (see `host/child.ts`): loads isolated-vm, hosts runs in an
 * `IsolateEngine` and talks to its parent over the IPC channel only. Its argument is the JSON text of
 * `ChildConfig`. It exits (SIGKILL, which no stuck isolate thread can delay) as soon as the channel
 * closes, so a host that dies leaves no engine behind. Imports only relative files and packages
 * and never `@ptc/sandbox` at run time: the guest prelude arrives in the config.
 */
import { loadIsolatedVm } from '../load.js'
import { IsolateEngine } from './engine.js'
import type { EngineSources, FromEngine, ToEngine } from './protocol.js'

/** What the host tells a child at spawn (its only argument). */
export interface ChildConfig extends EngineSources {
  warmIsolates: number
  memoryBytes: number
}

const die = (): void => {
  process.kill(process.pid, 'SIGKILL')
}

if (typeof process.send !== 'function') throw new Error('child-entry must run as a child process with an IPC channel')
process.on('disconnect', die)

let outbox: FromEngine[] = []
let flushQueued = false

/**
 * Messages leave in order, in batches: one IPC write per event-loop turn (a fan-out of calls or a
 * flood of logs is one write). Flushing at the microtask instead measured no faster for sequential
 * sub-calls on this machine, and slower for fan-outs.
 */
function post(message: FromEngine): void {
  // A run's answer carries the process's CPU time: the host would otherwise read it from /proc for each run.
  if (message.t === 'finish' || message.t === 'fail') {
    const { user, system } = process.cpuUsage()
    message.processCpuMs = (user + system) / 1000
  }
  outbox.push(message)
  if (flushQueued) return
  flushQueued = true
  setImmediate(flush)
}

function flush(): void {
  flushQueued = false
  const batch = outbox
  outbox = []
  if (batch.length === 0 || !process.connected) return
  try {
    process.send?.(batch)
  } catch {
    die()
  }
}

const config = JSON.parse(process.argv[2] ?? '{}') as ChildConfig
const ivm = loadIsolatedVm()
const engine = new IsolateEngine(ivm, config, post, config.warmIsolates, config.memoryBytes)

process.on('message', (message: ToEngine) => {
  engine.handle(message)
})
post({ t: 'ready' })
