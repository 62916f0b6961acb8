/**
 * Three more baselines, without any sandbox: the program runs in plain Node, but on the other side of a thread
 * or of a process from the host tool, as a sandbox that keeps the guest off the host's thread must run it.
 * Each call is a message to the host (the main thread, or the parent process) and its answer a message back,
 * neither side spinning while it waits; or, in a worker that spins, its answer written into shared memory. What
 * they measure is the floor of that design on the machine: a sequential call through ptc's QuickJS worker or
 * isolated-vm's child process cannot cost less than one of these round trips, whatever the sandbox does.
 */
import type { ChildProcess } from 'node:child_process'
import type { Worker } from 'node:worker_threads'
import { hostTool } from '../programs.js'
import type { Driver, RuntimeSpec } from './driver.js'

/** Host -> program: run a body. Program -> host: call the tool, or the run's outcome. */
type ToProgram = { t: 'run'; body: string } | { t: 'result'; id: number; value: unknown }
type ToHost =
  | { t: 'call'; id: number; args: { i: number } }
  | { t: 'done'; value: unknown }
  | { t: 'failed'; message: string }

/**
 * The program side, as source (a worker's `eval`, a child's `-e`): `send` and `onMessage` are its channel.
 * Each body is compiled as an `AsyncFunction` whose `tool` sends a call and resolves on its answer.
 */
const programSide = (channel: string): string => `
${channel}
const AsyncFunction = Object.getPrototypeOf(async () => undefined).constructor
const pending = new Map()
let next = 0
const tool = (args) => new Promise((resolve) => { const id = next++; pending.set(id, resolve); send({ t: 'call', id, args }) })
onMessage((m) => {
  if (m.t === 'result') { const resolve = pending.get(m.id); pending.delete(m.id); resolve(m.value); return }
  new AsyncFunction('tool', m.body)(tool).then((value) => send({ t: 'done', value }), (error) => send({ t: 'failed', message: String(error) }))
})
`

/** The host side over one channel: answers the program's calls with the host tool, one run at a time. */
function hostSide(
  post: (m: ToProgram) => void,
  listen: (on: (m: ToHost) => void, onEnd: (why: string) => void) => void,
  close: () => Promise<void>,
  answer: (id: number, value: unknown) => void = (id, value) => post({ t: 'result', id, value }),
): Driver {
  let current: { resolve: (v: unknown) => void; reject: (e: Error) => void } | undefined
  let ended: string | undefined
  const onEnd = (why: string): void => {
    ended = why
    current?.reject(new Error(why))
  }
  listen((m) => {
    if (m.t === 'call') void hostTool(m.args).then((value) => answer(m.id, value))
    else if (m.t === 'done') current?.resolve(m.value)
    else current?.reject(new Error(m.message))
  }, onEnd)
  return {
    run: (body) =>
      new Promise((resolve, reject) => {
        if (ended !== undefined) throw new Error(ended)
        current = { resolve, reject }
        post({ t: 'run', body })
      }),
    dispose: close,
  }
}

/** The worker's channel, as source. */
const WORKER_CHANNEL = `const { parentPort, workerData } = require('node:worker_threads')
const send = (m) => parentPort.postMessage(m)
const onMessage = (on) => parentPort.on('message', on)`

async function startWorker(source: string, workerData?: unknown): Promise<Worker> {
  const { Worker: WorkerClass } = await import('node:worker_threads')
  return new WorkerClass(source, { eval: true, workerData })
}

function workerDriver(worker: Worker, answer?: (id: number, value: unknown) => void): Driver {
  return hostSide(
    (m) => worker.postMessage(m),
    (on, onEnd) => {
      worker.on('message', on)
      worker.on('error', (error) => onEnd(`the worker failed: ${error.message}`))
      worker.on('exit', (code) => onEnd(`the worker exited (${code})`))
    },
    async () => void (await worker.terminate()),
    answer,
  )
}

/** Bytes for one answer in shared memory (the benchmark's answers are a few dozen). */
const ANSWER_BYTES = 4096

export const nodeWorkerThread: RuntimeSpec = {
  id: 'node-worker',
  label: 'plain Node, the program in a worker thread (no sandbox)',
  kind: 'baseline',
  tool: 'tool',
  packages: [],
  method:
    'the same program text compiled as an `AsyncFunction` in a worker thread (`new Worker`, eval), each tool call a `postMessage` to the main thread, which runs the host tool and answers with one; both sides wait in their event loops: what a call costs that crosses a thread without spinning, with no sandbox (its cold first run: starting the worker)',
  load: async () => async () => workerDriver(await startWorker(programSide(WORKER_CHANNEL))),
}

export const nodeWorkerSpinning: RuntimeSpec = {
  id: 'node-worker-spin',
  label: 'plain Node, the program in a worker thread that spins for each answer (no sandbox)',
  kind: 'baseline',
  tool: 'tool',
  packages: [],
  method:
    'as the worker-thread row, but the worker waits for each answer spinning on shared memory, where the main thread writes it (no message back, no wake-up of the worker): the cheapest crossing of a thread, at the price of a core burnt while the tool runs; a call blocks the program, so a Promise.all makes its calls one after another',
  load: async () => async () => {
    const shared = new SharedArrayBuffer(8 + ANSWER_BYTES)
    const words = new Int32Array(shared, 0, 2)
    const bytes = new Uint8Array(shared, 8)
    const encoder = new TextEncoder()
    const source = `${WORKER_CHANNEL}
const words = new Int32Array(workerData, 0, 2)
const bytes = new Uint8Array(workerData, 8)
const decoder = new TextDecoder()
const AsyncFunction = Object.getPrototypeOf(async () => undefined).constructor
const tool = (args) => {
  const seen = Atomics.load(words, 0)
  send({ t: 'call', id: 0, args })
  while (Atomics.load(words, 0) === seen);
  return Promise.resolve(JSON.parse(decoder.decode(bytes.slice(0, words[1]))))
}
onMessage((m) => new AsyncFunction('tool', m.body)(tool).then((value) => send({ t: 'done', value }), (error) => send({ t: 'failed', message: String(error) })))
`
    return workerDriver(await startWorker(source, shared), (_id, value) => {
      words[1] = encoder.encodeInto(JSON.stringify(value), bytes).written
      Atomics.add(words, 0, 1)
    })
  },
}

export const nodeChildProcess: RuntimeSpec = {
  id: 'node-process',
  label: 'plain Node, the program in a child process (no sandbox)',
  kind: 'baseline',
  tool: 'tool',
  packages: [],
  method:
    "the same program text compiled as an `AsyncFunction` in a child process (`node --no-node-snapshot -e`, as isolated-vm's engine processes start on Node 20), each tool call a message over Node's IPC channel (JSON, as ptc's engine processes use) to this process, which runs the host tool and answers with one: what a call costs that crosses a process, with no sandbox (its cold first run: starting the process)",
  load: async () => {
    const { spawn } = await import('node:child_process')
    return async () => {
      const source = programSide(`const send = (m) => process.send(m)
const onMessage = (on) => process.on('message', on)`)
      const child: ChildProcess = spawn(process.execPath, ['--no-node-snapshot', '-e', source], {
        stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
        serialization: 'json',
        env: { ...process.env, NODE_OPTIONS: '' },
      })
      const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
      return hostSide(
        (m) => void child.send(m),
        (on, onEnd) => {
          child.on('message', (m) => on(m as ToHost))
          child.on('error', (error) => onEnd(`the child process failed: ${error.message}`))
          child.on('exit', (code, signal) => onEnd(`the child process exited (${signal ?? String(code)})`))
        },
        async () => {
          child.kill()
          await exited
        },
      )
    }
  },
}
