import { spawnSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { Worker, type TransferListItem } from 'node:worker_threads'
import { expect, test } from 'vitest'
import type { CodeRunRequest, CodeRunResult, JsonValue } from '@ptc/sandbox'
import type { EngineWorkerData } from '../engine/worker-entry.js'
import { WorkerPool } from './pool.js'
import { QuickJSCodeRuntime } from '../runtime.js'
import { spawnEngineWorker } from './spawn.js'

const BOUND_MS = 1500
const WARM_BYTES = 256 * 1024 * 1024
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms))

function request(code: string, extra: Partial<CodeRunRequest> = {}): CodeRunRequest {
  return { code, bindings: ['echo'], call: async (_n, args) => args, language: 'javascript', ...extra }
}

async function timed(p: Promise<CodeRunResult>): Promise<{ result: CodeRunResult; elapsedMs: number }> {
  const t0 = performance.now()
  const result = await p
  return { result, elapsedMs: performance.now() - t0 }
}

/** Workers that die before they are ready: an exception at boot, or an exit. */
const BROKEN = [
  (): Worker => new Worker('throw new Error("boom at boot")', { eval: true }),
  (): Worker => new Worker('process.exit(3)', { eval: true }),
  (): Worker => {
    throw new Error('cannot spawn')
  },
]

test('workers that keep failing to boot are retried with a growing delay, and a waiting run ends by its wall', async () => {
  let spawned = 0
  const pool = new WorkerPool({
    size: 1,
    variant: 'quickjs',
    warmBytes: WARM_BYTES,
    spawn: () => (BROKEN[spawned++ % BROKEN.length] as () => Worker)(),
  })
  const runtime = new QuickJSCodeRuntime({}, pool)
  try {
    const { result, elapsedMs } = await timed(runtime.run(request('return 1', { limits: { wallMs: 1500 } })))
    expect(result.error?.kind).toBe('timeout')
    expect(result.error?.message).toMatch(/before the program started/)
    expect(elapsedMs).toBeLessThan(1500 + BOUND_MS)
    // Retried, but with delays of 0, 100, 200, 400, 800 ms...: a handful of spawns, not thousands.
    expect(spawned).toBeGreaterThanOrEqual(2)
    expect(spawned).toBeLessThanOrEqual(10)
    expect(pool.workers).toBe(1)
  } finally {
    await runtime.dispose()
  }
  const after = spawned
  await sleep(300)
  expect(spawned, 'no respawn after dispose').toBe(after)
}, 30_000)

test('a pool whose replacement workers fail at boot recovers once workers boot again, and its run succeeds', async () => {
  let spawned = 0
  const spawn = (data: EngineWorkerData): Worker =>
    spawned++ < 3 ? (BROKEN[spawned % BROKEN.length] as () => Worker)() : spawnEngineWorker(data)
  const pool = new WorkerPool({ size: 1, variant: 'quickjs', warmBytes: WARM_BYTES, spawn })
  const runtime = new QuickJSCodeRuntime({}, pool)
  try {
    const r = await runtime.run(request('return (await tools.echo({ v: 7 })).v', { limits: { wallMs: 20_000 } }))
    expect(r.value).toBe(7)
    expect(r.stats.queueMs).toBeGreaterThan(0)
    expect(spawned).toBe(4)
    expect(pool.workers).toBe(1)
  } finally {
    await runtime.dispose()
  }
}, 30_000)

test('a worker that dies mid-run fails only that run, as crash, and a replacement serves the next runs', async () => {
  const workers: Worker[] = []
  const spawn = (data: EngineWorkerData): Worker => {
    const w = spawnEngineWorker(data)
    workers.push(w)
    return w
  }
  const pool = new WorkerPool({ size: 1, variant: 'quickjs', warmBytes: WARM_BYTES, spawn })
  const runtime = new QuickJSCodeRuntime({}, pool)
  try {
    expect((await runtime.run(request('return 0'))).value).toBe(0)
    for (let i = 0; i < 3; i++) {
      let inCall!: () => void
      const called = new Promise<void>((resolve) => (inCall = resolve))
      const doomed = runtime.run(
        request('console.log("before"); await tools.echo({}); return "never"', {
          call: () => (inCall(), new Promise<JsonValue>(() => {})),
        }),
      )
      await called
      await (workers.at(-1) as Worker).terminate()
      const r = await doomed
      expect(r.error?.kind).toBe('crash')
      expect(r.logs).toEqual(['before'])
      expect((await runtime.run(request('return (await tools.echo({ i: 1 })).i'))).value).toBe(1)
      expect(pool.workers).toBe(1)
    }
  } finally {
    await runtime.dispose()
  }
}, 60_000)

test('the pool boots its first worker when the runtime is created (prewarm) or with the first run, and the others once that one is up and free', async () => {
  for (const prewarm of [true, false]) {
    let spawned = 0
    const pool = new WorkerPool({
      size: 3,
      variant: 'quickjs',
      warmBytes: WARM_BYTES,
      spawn: (data) => (spawned++, spawnEngineWorker(data)),
    })
    const runtime = new QuickJSCodeRuntime({ prewarm }, pool)
    try {
      expect([prewarm, spawned]).toEqual([prewarm, prewarm ? 1 : 0])
      expect((await runtime.run(request('return 1'))).value).toBe(1)
      // The first run ended: the others boot (when prewarmed, they may have started as soon as the first worker was up).
      expect([prewarm, spawned]).toEqual([prewarm, 3])
      expect(pool.workers).toBe(3)
    } finally {
      await runtime.dispose()
    }
  }
  // Prewarmed and never asked for a run: the others boot once the first worker is ready.
  let spawned = 0
  const pool = new WorkerPool({
    size: 2,
    variant: 'quickjs',
    warmBytes: WARM_BYTES,
    spawn: (data) => (spawned++, spawnEngineWorker(data)),
  })
  const runtime = new QuickJSCodeRuntime({}, pool)
  try {
    expect(spawned).toBe(1)
    while (spawned < 2) await sleep(10)
    expect(pool.workers).toBe(2)
  } finally {
    await runtime.dispose()
  }
}, 30_000)

test('a run waiting for the first worker while it is busy has the others boot, and runs on one of them', async () => {
  const spawnedWith: EngineWorkerData[] = []
  const pool = new WorkerPool({
    size: 2,
    variant: 'quickjs',
    warmBytes: WARM_BYTES,
    spawn: (data) => (spawnedWith.push(data), spawnEngineWorker(data)),
  })
  const runtime = new QuickJSCodeRuntime({ prewarm: false }, pool)
  try {
    let release!: () => void
    let entered!: () => void
    const inCall = new Promise<void>((resolve) => (entered = resolve))
    const held = runtime.run(
      request('return (await tools.echo({ v: 1 })).v', {
        call: (_n, args) => (entered(), new Promise<JsonValue>((resolve) => (release = () => resolve(args)))),
      }),
    )
    await inCall
    expect(spawnedWith.length).toBe(1)
    // The only worker is busy: this run waits, which boots the second worker, where it runs.
    expect((await runtime.run(request('return (await tools.echo({ v: 2 })).v'))).value).toBe(2)
    expect(spawnedWith.length).toBe(2)
    release()
    expect((await held).value).toBe(1)
  } finally {
    await runtime.dispose()
  }
}, 30_000)

test("workers spawned once the host compiled the engine's WebAssembly module take it, and run on it", async () => {
  const workers: { data: EngineWorkerData; worker: Worker }[] = []
  const spawn = (data: EngineWorkerData): Worker => {
    const worker = spawnEngineWorker(data)
    workers.push({ data, worker })
    return worker
  }
  const pool = new WorkerPool({ size: 1, variant: 'quickjs', warmBytes: WARM_BYTES, spawn })
  const runtime = new QuickJSCodeRuntime({}, pool)
  try {
    expect((await runtime.run(request('return 1'))).value).toBe(1)
    while (pool.wasmModule === undefined) await sleep(10)
    // A replacement spawned from now on gets the host's module.
    await (workers.at(-1) as { worker: Worker }).worker.terminate()
    while (workers.length < 2) await sleep(10)
    const replacement = workers.at(-1) as { data: EngineWorkerData }
    expect(replacement.data.wasmModule).toBe(pool.wasmModule)
    expect(Object.prototype.toString.call(replacement.data.wasmModule)).toBe('[object WebAssembly.Module]')
    expect(
      (await runtime.run(request('return (await tools.echo({ v: [1, 2] })).v.length + Math.max(...[3, 4])'))).value,
    ).toBe(6)
  } finally {
    await runtime.dispose()
  }
}, 30_000)

test('the workers after the first take the used page count its boot found, and their runs start from a clean engine', async () => {
  const spawned: EngineWorkerData[] = []
  const spawn = (data: EngineWorkerData): Worker => {
    spawned.push(data)
    return spawnEngineWorker(data)
  }
  const pool = new WorkerPool({ size: 3, variant: 'quickjs', warmBytes: WARM_BYTES, spawn })
  const runtime = new QuickJSCodeRuntime({}, pool)
  // Each run leaves a global, a large heap and a pending job behind, and reports what it found.
  const code = `const found = [typeof globalThis.left, typeof globalThis.big]
globalThis.left = 1
globalThis.big = Array.from({ length: 20000 }, (_, i) => ({ i, s: 'x' + i }))
Promise.resolve().then(() => { globalThis.late = 1 })
await tools.echo({})
return found.concat(typeof globalThis.late === 'number' ? [] : ['no late job'])`
  try {
    expect((await runtime.run(request(code))).value).toEqual(['undefined', 'undefined'])
    while (spawned.length < 3) await sleep(10)
    expect(spawned[0]?.usedPages, 'the first worker searches').toBeUndefined()
    expect(pool.usedPages).toBeGreaterThan(0)
    for (const later of spawned.slice(1)) expect(later.usedPages).toBe(pool.usedPages)
    // Enough runs at once that every worker runs several, each after another's.
    const results = await Promise.all(Array.from({ length: 12 }, () => runtime.run(request(code))))
    for (const result of results) expect(result.value, JSON.stringify(result.error)).toEqual(['undefined', 'undefined'])
  } finally {
    await runtime.dispose()
  }
}, 30_000)

test('a prewarmed runtime that is never used lets the process exit: its idle workers are unreferenced', () => {
  // A child process creates a worker runtime and never runs anything; it must exit on its own.
  const script =
    "import { createQuickJSRuntime } from '@ptc/sandbox-quickjs'\ncreateQuickJSRuntime({ poolSize: 2 })\nsetTimeout(() => console.log('created'), 300)\n"
  const child = spawnSync(
    process.execPath,
    ['--conditions=@ptc/source', '--import', 'tsx', '--input-type=module', '-e', script],
    {
      cwd: fileURLToPath(new URL('../../../..', import.meta.url)),
      env: { ...process.env, NODE_OPTIONS: '' },
      encoding: 'utf8',
      timeout: 20_000,
    },
  )
  expect([child.status, child.signal, child.stdout.trim()]).toEqual([0, null, 'created'])
}, 30_000)

test('a run goes to a free worker whose idle engine has its memory limit: runs of two limits do not boot an engine each', async () => {
  const workers: { limits: number[]; ready: Promise<void> }[] = []
  const spawn = (data: EngineWorkerData): Worker => {
    const worker = spawnEngineWorker(data)
    const seen = {
      limits: [] as number[],
      ready: new Promise<void>((resolve) => worker.on('message', (m: { t?: string }) => m.t === 'ready' && resolve())),
    }
    const post = worker.postMessage.bind(worker)
    worker.postMessage = (
      message: { t?: string; input?: { limits: { memoryBytes: number } } },
      transfer?: readonly TransferListItem[],
    ) => {
      if (message.t === 'run' && message.input !== undefined) seen.limits.push(message.input.limits.memoryBytes)
      post(message, transfer)
    }
    workers.push(seen)
    return worker
  }
  const pool = new WorkerPool({ size: 2, variant: 'quickjs', warmBytes: WARM_BYTES, spawn })
  const runtime = new QuickJSCodeRuntime({}, pool)
  const own = 64 * 1024 * 1024
  try {
    while (workers.length < 2) await sleep(10)
    await Promise.all(workers.map((w) => w.ready))
    // Both workers warmed an engine for the default limit. The first run with its own limit takes one of them;
    // from then on each limit has its worker, one run at a time.
    for (let i = 0; i < 8; i++) {
      const limits = i % 2 === 0 ? { memoryBytes: own } : {}
      expect((await runtime.run(request('return (await tools.echo({ i: 1 })).i', { limits }))).value).toBe(1)
    }
    const byWorker = workers
      .map((w) => [...new Set(w.limits)].sort((a, b) => a - b))
      .sort((a, b) => (a[0] ?? 0) - (b[0] ?? 0))
    expect(byWorker).toEqual([[own], [WARM_BYTES]])
  } finally {
    await runtime.dispose()
  }
}, 30_000)
