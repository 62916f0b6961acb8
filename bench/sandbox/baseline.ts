/**
 * Baselines for sandbox benchmarks, measured in the same process: the raw QuickJS library driven
 * directly (sync build, host-created promises, job pump: the shape the backend uses) and plain Node
 * async calls.
 */
import { createRequire } from 'node:module'
import { pathToFileURL } from 'node:url'
import type { QuickJSWASMModule } from '../../sandbox/quickjs/node_modules/quickjs-emscripten-core/dist/index.js'

// The library is a dependency of @ptc/sandbox-quickjs, not of the workspace root: resolve it from there.
const fromQuickJS = createRequire(new URL('../../sandbox/quickjs/package.json', import.meta.url))
async function load(name: string): Promise<Record<string, unknown>> {
  return (await import(pathToFileURL(fromQuickJS.resolve(name)).href)) as Record<string, unknown>
}

export function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.floor(s.length / 2)] ?? Number.NaN
}

/** Runs `fn` `repeat` times (after one warm-up) and returns the median of its results. */
export async function medianOf(repeat: number, fn: () => Promise<number>): Promise<number> {
  await fn()
  const out: number[] = []
  for (let i = 0; i < repeat; i++) out.push(await fn())
  return median(out)
}

let module: QuickJSWASMModule | undefined
export async function rawModule(): Promise<QuickJSWASMModule> {
  if (module !== undefined) return module
  const core = await load('quickjs-emscripten-core')
  const variant = await load('@jitl/quickjs-wasmfile-release-sync')
  const newModule = core.newQuickJSWASMModuleFromVariant as (v: unknown) => Promise<QuickJSWASMModule>
  module = await newModule(variant.default)
  return module
}

/** Raw library: a fresh runtime + context, evaluate a trivial program, dispose. Returns ms. */
export async function rawTrivialRun(): Promise<number> {
  const mod = await rawModule()
  const t0 = performance.now()
  const rt = mod.newRuntime()
  const ctx = rt.newContext()
  ctx.unwrapResult(ctx.evalCode('(async () => 1)()')).dispose()
  rt.executePendingJobs()
  ctx.dispose()
  rt.dispose()
  return performance.now() - t0
}

/**
 * Raw library: `n` sub-calls from the guest (`await tool(i)` in sequence, or `Promise.all`), each a
 * host function returning a `newPromise()` the host resolves on a microtask, then pumping jobs.
 * Returns the time per call in microseconds.
 */
export async function rawSubCalls(n: number, parallel: boolean): Promise<number> {
  const mod = await rawModule()
  const rt = mod.newRuntime()
  const ctx = rt.newContext()
  const pending: Promise<void>[] = []
  const tool = ctx.newFunction('tool', (arg) => {
    const value = ctx.getNumber(arg)
    const deferred = ctx.newPromise()
    pending.push(
      Promise.resolve(value).then((v) => {
        const h = ctx.newNumber(v)
        deferred.resolve(h)
        h.dispose()
        deferred.dispose()
        rt.executePendingJobs()
      }),
    )
    return deferred.handle
  })
  ctx.setProp(ctx.global, 'tool', tool)
  tool.dispose()
  const t0 = performance.now()
  const result = ctx.unwrapResult(ctx.evalCode(rawProgram(n, parallel)))
  rt.executePendingJobs()
  while (ctx.getPromiseState(result).type === 'pending') {
    const batch = pending.splice(0)
    await Promise.all(batch)
  }
  const us = ((performance.now() - t0) * 1000) / n
  result.dispose()
  ctx.dispose()
  rt.dispose()
  return us
}

/** The guest program of the raw baselines: `n` calls of the global `tool(i)`, awaited one by one or all at once. */
function rawProgram(n: number, parallel: boolean): string {
  return parallel
    ? `(async () => { const r = await Promise.all(Array.from({ length: ${n} }, (_, i) => tool(i))); return r.length })()`
    : `(async () => { let s = 0; for (let i = 0; i < ${n}; i++) s += await tool(i); return s })()`
}

/** Plain Node: the same loop with an async function. Microseconds per call. */
export async function nodeSubCalls(n: number, parallel: boolean): Promise<number> {
  const tool = async (i: number): Promise<number> => i
  const t0 = performance.now()
  if (parallel) await Promise.all(Array.from({ length: n }, (_, i) => tool(i)))
  else for (let i = 0; i < n; i++) await tool(i)
  return ((performance.now() - t0) * 1000) / n
}

/** Raw library CPU-bound loop (ms). */
export async function rawCpuLoop(iterations: number): Promise<number> {
  const mod = await rawModule()
  const ctx = mod.newContext()
  const t0 = performance.now()
  ctx.unwrapResult(ctx.evalCode(`let x = 0; for (let i = 0; i < ${iterations}; i++) x += i; x`)).dispose()
  const ms = performance.now() - t0
  ctx.dispose()
  return ms
}

export function nodeCpuLoop(iterations: number): number {
  const t0 = performance.now()
  let x = 0
  for (let i = 0; i < iterations; i++) x += i
  if (x < 0) console.log(x)
  return performance.now() - t0
}

let rawWorker: Promise<import('node:worker_threads').Worker> | undefined

/**
 * Raw library in a worker thread (./raw-worker.mjs): `n` sub-calls, each one `postMessage` to this
 * thread, answered on a microtask by one `postMessage` back. The baseline for worker isolation.
 * Microseconds per call, measured here from the start message to the done message.
 */
export async function rawWorkerSubCalls(n: number, parallel: boolean): Promise<number> {
  const { Worker } = await import('node:worker_threads')
  rawWorker ??= new Promise((resolve, reject) => {
    const w = new Worker(new URL('./raw-worker.mjs', import.meta.url))
    w.once('message', () => resolve(w))
    w.once('error', reject)
  })
  const worker = await rawWorker
  return new Promise((resolve) => {
    const t0 = performance.now()
    const onMessage = (m: { t: 'call'; id: number; value: number } | { t: 'done' }): void => {
      if (m.t === 'call') {
        void Promise.resolve(m.value).then((value) => worker.postMessage({ t: 'settle', id: m.id, value }))
        return
      }
      worker.off('message', onMessage)
      resolve(((performance.now() - t0) * 1000) / n)
    }
    worker.on('message', onMessage)
    worker.postMessage({ t: 'run', code: rawProgram(n, parallel) })
  })
}

/** Stops the raw-library worker, if one was started. */
export async function closeRawWorker(): Promise<void> {
  const w = await rawWorker
  rawWorker = undefined
  await w?.terminate()
}
