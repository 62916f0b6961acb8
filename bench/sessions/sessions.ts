/**
 * Sandbox sessions on QuickJS: what a session costs a warm run, what suspending and resuming one costs
 * as its data grows, and whether memory comes back when idle sessions go to the filesystem store.
 *
 *   node --expose-gc --conditions=@ptc/source --import tsx bench/sessions/sessions.ts [--quick] [--no-idle]
 *
 * `--no-idle` skips part 3 (its fresh processes take most of the time).
 *
 * 1. Warm trivial run (`return 1`), without a session and in one (its next run finds its memory in
 *    place), interleaved, per isolation; and a warm run in a session holding 10 MiB of data.
 * 2. Suspend (capture is already done: seal = encode + brotli + HMAC) and resume (open + decode) of an
 *    idle session holding N MiB of JSON-like program data, and the first run after the resume (which
 *    restores the memory), inline isolation; sizes: the engine memory's changed bytes and the sealed bytes.
 * 3. 1 000 idle sessions with a little state each, suspended to a filesystem store: host RSS at the start, with
 *    all live, after they left memory (GC forced), and once the process did nothing until V8 gave back its heap
 *    (at most 40 s), each time in a fresh process (`--idle-only`), interleaved: with glibc's default malloc
 *    arenas and with `MALLOC_ARENA_MAX` 2 and 1. This part takes most of the benchmark's time (about 6 minutes).
 *    Then the byte planes of 32 MiB (a suspension's pass over the memory, each way): WebAssembly SIMD against
 *    the same planes in JavaScript, in this process.
 * 4. Durable runs (durable approval's sandbox part), per isolation: a warm trivial run made durable
 *    against a plain one, interleaved; then a program holding N MiB that parks a call: the run until
 *    it suspended (capture + seal), and open + resume to its end, against the same program whose call
 *    answers at once; and the same in a session that holds the data (the suspension takes the session's state).
 */
import { spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { CodeRunRequest, CodeRuntime } from '@ptc/sandbox'
import { createFileSessionStore, parkCall } from '@ptc/sandbox/session'
import { createQuickJSRuntime } from '@ptc/sandbox-quickjs'
// The planes' two implementations are internal to the QuickJS package: measured from its source.
import {
  fromBytePlanes,
  jsFromBytePlanes,
  jsToBytePlanes,
  toBytePlanes,
} from '../../sandbox/quickjs/src/host/byte-planes.js'
import { quickRequested } from '../json.js'
import { machine, median } from '../util.js'

const quick = quickRequested
const ROUNDS = quick ? 3 : 5
const RUNS = quick ? 100 : 300
const call = (): Promise<never> => Promise.reject(new Error('no tools'))
const req = (code: string, session?: string): CodeRunRequest => ({
  code,
  language: 'javascript',
  bindings: [],
  call,
  ...(session === undefined ? {} : { session }),
})
const gc = (globalThis as { gc?: () => void }).gc ?? (() => undefined)
const MiB = 1024 * 1024

/** A program that puts about `mib` MiB (as JSON) of varied records on globalThis.data. */
const dataProgram = (mib: number): string => `
const n = Math.round(${mib} * 1048576 / 80)
globalThis.data = Array.from({ length: n }, (_, i) => ({ id: i, name: 'item-' + i, tags: i % 3 === 0 ? ['a', 'b'] : ['c'], price: i * 1.25, ok: i % 2 === 0 }))
return JSON.stringify(data).length`

async function perRun(runtime: CodeRuntime, code: string, session: string | undefined, n: number): Promise<number> {
  const start = performance.now()
  for (let i = 0; i < n; i++) {
    const r = await runtime.run(req(code, session))
    if (r.error !== undefined) throw new Error(r.error.message)
  }
  return ((performance.now() - start) / n) * 1000
}

function spread(values: readonly number[]): string {
  return `${Math.min(...values).toFixed(2)}-${Math.max(...values).toFixed(2)}`
}

async function warmRuns(): Promise<string[]> {
  const lines = [
    '| isolation | plain run µs | session run µs | session / plain (spread) | run in a 10 MiB session µs |',
    '|---|---|---|---|---|',
  ]
  for (const isolation of ['worker', 'inline'] as const) {
    const runtime = createQuickJSRuntime({ isolation })
    await perRun(runtime, 'return 1', undefined, 50)
    await perRun(runtime, 'return 1', 'warm', 50)
    const big = await runtime.run(req(dataProgram(10), 'big'))
    if (big.error !== undefined) throw new Error(big.error.message)
    const plain: number[] = []
    const session: number[] = []
    const ratios: number[] = []
    const bigRuns: number[] = []
    for (let round = 0; round < ROUNDS; round++) {
      const p = await perRun(runtime, 'return 1', undefined, RUNS)
      const s = await perRun(runtime, 'return 1', 'warm', RUNS)
      plain.push(p)
      session.push(s)
      ratios.push(s / p)
      bigRuns.push(await perRun(runtime, 'return data.length', 'big', Math.max(5, RUNS / 20)))
    }
    lines.push(
      `| ${isolation} | ${median(plain).toFixed(0)} | ${median(session).toFixed(0)} | ${median(ratios).toFixed(2)}x (${spread(ratios)}) | ${median(bigRuns).toFixed(0)} |`,
    )
    await runtime.dispose()
  }
  return lines
}

async function suspendResume(): Promise<string[]> {
  const lines = [
    '| program data (JSON) | session state (changed engine memory) | sealed | sealed / state | suspend ms | resume ms | first run after resume ms |',
    '|---|---|---|---|---|---|---|',
  ]
  const runtime = createQuickJSRuntime({
    isolation: 'inline',
    sessions: { secret: 'bench-secret-0123456789abcdef', maxSessionBytes: 512 * MiB },
    limits: { memoryBytes: 512 * MiB },
  })
  for (const mib of quick ? [1, 10] : [1, 5, 10, 20]) {
    const key = `data-${mib}`
    const made = await runtime.run(req(dataProgram(mib), key))
    if (made.error !== undefined || made.session === undefined) throw new Error(made.error?.message ?? 'no session')
    const suspend: number[] = []
    const resume: number[] = []
    const first: number[] = []
    let sealed = 0
    for (let round = 0; round < ROUNDS; round++) {
      let t = performance.now()
      const bytes = await runtime.suspendSession?.(key)
      suspend.push(performance.now() - t)
      if (bytes === undefined) throw new Error('nothing to suspend')
      sealed = bytes.byteLength
      t = performance.now()
      await runtime.resumeSession?.(key, bytes)
      resume.push(performance.now() - t)
      // Another session's run in between, so the image does not hold this one's memory any more.
      await runtime.run(req('return 0', 'other'))
      t = performance.now()
      const r = await runtime.run(req('return data.length', key))
      first.push(performance.now() - t)
      if (r.error !== undefined) throw new Error(r.error.message)
    }
    const state = made.session.bytes
    lines.push(
      `| ${((made.value as number) / MiB).toFixed(1)} MiB | ${(state / MiB).toFixed(1)} MiB | ${(sealed / MiB).toFixed(2)} MiB | ${((sealed / state) * 100).toFixed(1)}% | ${median(suspend).toFixed(1)} (${spread(suspend)}) | ${median(resume).toFixed(1)} (${spread(resume)}) | ${median(first).toFixed(1)} (${spread(first)}) |`,
    )
    await runtime.endSession?.(key)
  }
  await runtime.dispose()
  return lines
}

/**
 * The byte planes of a suspension (`toBytePlanes`, WebAssembly SIMD) against the same planes in JavaScript
 * (`jsToBytePlanes`), and back, over `mib` MiB of an engine's memory shaped like a session's (8-byte
 * words whose high bytes repeat), interleaved, first call and then the median of `ROUNDS`.
 */
function bytePlanes(mib: number): string[] {
  const bytes = mib * MiB
  const src = new Uint8Array(bytes)
  const words = new BigUint64Array(src.buffer)
  for (let i = 0; i < words.length; i++) words[i] = (0xfff9n << 48n) | BigInt((i * 2654435761) % 1_000_003)
  const out = new Uint8Array(bytes)
  const ways = [
    ['WebAssembly SIMD', toBytePlanes, fromBytePlanes],
    ['JavaScript', jsToBytePlanes, jsFromBytePlanes],
  ] as const
  const times = ways.map(() => ({ to: [] as number[], from: [] as number[] }))
  for (let round = 0; round <= ROUNDS; round++) {
    ways.forEach(([, to, from], i) => {
      let t = performance.now()
      to(src, out)
      times[i]?.to.push(performance.now() - t)
      t = performance.now()
      from(out, src)
      times[i]?.from.push(performance.now() - t)
    })
  }
  const lines = [
    `| byte planes of ${mib} MiB | to planes: first call, then median (spread) | back: first call, then median (spread) |`,
    '|---|---|---|',
  ]
  ways.forEach(([name], i) => {
    const { to, from } = times[i] as { to: number[]; from: number[] }
    const figure = (xs: number[]): string =>
      `${(xs[0] as number).toFixed(1)} ms, ${median(xs.slice(1)).toFixed(1)} ms (${spread(xs.slice(1))})`
    lines.push(`| ${name} | ${figure(to)} | ${figure(from)} |`)
  })
  return lines
}

/** What `idleSessions` measured in one process. */
interface IdleFigures {
  count: number
  start: number
  live: number
  after: number
  /** RSS once the process had been idle until V8 gave back its heap (or `IDLE_WAIT_MS`), and how long that took (s). */
  idle: number
  idleAfterS: number
  /** JavaScript heap + buffers at the start, live, after (MiB). */
  js: [number, number, number]
}

/** The longest an idle-sessions process waits, doing nothing, for V8 to give back the heap pages it no longer uses. */
const IDLE_WAIT_MS = 40_000

async function idleSessions(): Promise<IdleFigures> {
  const count = quick ? 300 : 1000
  const directory = mkdtempSync(join(tmpdir(), 'ptc-bench-sessions-'))
  const store = createFileSessionStore({ directory })
  const runtime = createQuickJSRuntime({
    isolation: 'inline',
    sessions: { store, secret: 'bench-secret-0123456789abcdef', maxSessions: count + 10, suspendAfterMs: 200 },
  })
  try {
    await runtime.run(req('return 1', 'warm-up'))
    await runtime.endSession?.('warm-up')
    gc()
    // RSS, and the memory of JavaScript objects and buffers (what the sessions' states are).
    const rss = (): number => process.memoryUsage().rss / MiB
    const js = (): number => {
      const m = process.memoryUsage()
      return (m.heapUsed + m.arrayBuffers) / MiB
    }
    const start = rss()
    const startJs = js()
    for (let i = 0; i < count; i++) {
      const r = await runtime.run(
        req('globalThis.notes = Array.from({ length: 200 }, (_, j) => "note " + j); return notes.length', `s${i}`),
      )
      if (r.error !== undefined) throw new Error(r.error.message)
    }
    gc()
    const live = rss()
    const liveJs = js()
    // Past suspendAfterMs the sweep saves them all to the store; wait until the store has them.
    await new Promise((resolve) => setTimeout(resolve, 1500))
    const last = await store.get(`s${count - 1}`)
    if (last === undefined) throw new Error('the sessions were not suspended')
    gc()
    await new Promise((resolve) => setTimeout(resolve, 100))
    gc()
    const after = rss()
    const afterJs = js()
    // Then the host does nothing, as a host whose sessions went idle: some seconds later V8's memory reducer gives
    // back the heap pages it no longer uses (a forced collection does not), and its committed heap falls.
    const committed = (): number => process.memoryUsage().heapTotal
    const busy = committed()
    let waited = 0
    while (waited < IDLE_WAIT_MS && committed() > busy * 0.75) {
      await new Promise((resolve) => setTimeout(resolve, 1000))
      waited += 1000
    }
    await new Promise((resolve) => setTimeout(resolve, 1000))
    const idle = rss()
    const back = await runtime.run(req('return notes.length', 's0'))
    if (back.value !== 200) throw new Error('a suspended session did not come back')
    return { count, start, live, after, idle, idleAfterS: waited / 1000, js: [startJs, liveJs, afterJs] }
  } finally {
    await runtime.dispose()
    rmSync(directory, { recursive: true, force: true })
  }
}

/**
 * `idleSessions` in fresh processes (its RSS at the start is the baseline only while the process has allocated
 * nothing else), `ROUNDS` each way, interleaved: glibc's default arenas (one per thread that allocates: V8's and
 * libuv's threads keep what they once held) and `MALLOC_ARENA_MAX` 2 and 1.
 */
function idleSessionsInFreshProcesses(): string[] {
  const variants = [
    { name: 'default', env: {} },
    { name: '`MALLOC_ARENA_MAX=2`', env: { MALLOC_ARENA_MAX: '2' } },
    { name: '`MALLOC_ARENA_MAX=1`', env: { MALLOC_ARENA_MAX: '1' } },
  ]
  const figures = variants.map((): IdleFigures[] => [])
  for (let round = 0; round < ROUNDS; round++) {
    variants.forEach((variant, i) => {
      const child = spawnSync(
        process.execPath,
        [...process.execArgv, process.argv[1] as string, '--idle-only', ...(quick ? ['--quick'] : [])],
        {
          env: { ...process.env, ...variant.env },
          encoding: 'utf8',
          maxBuffer: 1 << 20,
        },
      )
      const line = child.stdout.trim().split('\n').at(-1) ?? ''
      if (child.status !== 0 || !line.startsWith('{'))
        throw new Error(`the idle-sessions process failed (${String(child.status)}): ${child.stderr}`)
      figures[i]?.push(JSON.parse(line) as IdleFigures)
    })
  }
  const lines = [
    '| malloc arenas | sessions | RSS at start | all live | all in the store | after / start (spread) | then idle: RSS / start (spread), after | JS heap + buffers: start, live, after |',
    '|---|---|---|---|---|---|---|---|',
  ]
  variants.forEach((variant, i) => {
    const runs = figures[i] ?? []
    const mib = (pick: (f: IdleFigures) => number): string => `${median(runs.map(pick)).toFixed(0)} MiB`
    const ratios = runs.map((f) => (f.after / f.start) * 100)
    const idle = runs.map((f) => (f.idle / f.start) * 100)
    const percent = (xs: number[]): string =>
      `${median(xs).toFixed(0)}% (${Math.min(...xs).toFixed(0)}-${Math.max(...xs).toFixed(0)}%)`
    const jsAt = (at: 0 | 1 | 2): string => median(runs.map((f) => f.js[at])).toFixed(0)
    lines.push(
      `| ${variant.name} | ${runs[0]?.count ?? 0} | ${mib((f) => f.start)} | ${mib((f) => f.live)} | ${mib((f) => f.after)} | ${percent(ratios)} | ${percent(idle)}, ${median(runs.map((f) => f.idleAfterS)).toFixed(0)} s | ${jsAt(0)}, ${jsAt(1)}, ${jsAt(2)} MiB |`,
    )
  })
  return lines
}

/**
 * `code` (which awaits `tools.ask`) `ROUNDS` times each way: its call answered at once, and parked (the run until
 * it suspended, then open + resume to its end); the table cells: those times (ms) and the sealed size.
 */
async function parkedRuns(runtime: CodeRuntime, code: string, session: string | undefined): Promise<string> {
  const answered: number[] = []
  const suspend: number[] = []
  const resume: number[] = []
  let sealed = 0
  for (let round = 0; round < ROUNDS; round++) {
    let t = performance.now()
    const direct = await runtime.run({ ...req(code, session), bindings: ['ask'], call: async () => true })
    answered.push(performance.now() - t)
    if (direct.error !== undefined) throw new Error(direct.error.message)
    t = performance.now()
    const first = await runtime.run({
      ...req(code, session),
      bindings: ['ask'],
      call: () => Promise.reject(parkCall()),
      durable: { key: 'bench' },
    })
    suspend.push(performance.now() - t)
    const state = first.suspended?.state
    if (state === undefined) throw new Error(first.error?.message ?? 'the run did not suspend')
    sealed = state.byteLength
    t = performance.now()
    const opened = await (runtime.openRun as NonNullable<CodeRuntime['openRun']>)('bench', state)
    const end = await (runtime.resumeRun as NonNullable<CodeRuntime['resumeRun']>)(opened, { call: async () => true })
    resume.push(performance.now() - t)
    if (end.error !== undefined) throw new Error(end.error.message)
    if (session !== undefined && end.session?.kept !== true)
      throw new Error('the resumed run did not leave its session its state')
  }
  return `${median(answered).toFixed(1)} (${spread(answered)}) | ${median(suspend).toFixed(1)} (${spread(suspend)}) | ${(sealed / MiB).toFixed(2)} MiB | ${median(resume).toFixed(1)} (${spread(resume)})`
}

async function durableRuns(): Promise<string[]> {
  const lines = ['| isolation | plain run µs | durable run µs | durable / plain (spread) |', '|---|---|---|---|']
  const durable = (code: string): CodeRunRequest => ({ ...req(code), durable: { key: 'bench' } })
  const timed = async (runtime: CodeRuntime, make: () => CodeRunRequest, n: number): Promise<number> => {
    const start = performance.now()
    for (let i = 0; i < n; i++) if ((await runtime.run(make())).error !== undefined) throw new Error('run failed')
    return ((performance.now() - start) / n) * 1000
  }
  const parked: string[] = [
    '',
    '| isolation | program data | plain run with an answered call ms | run until suspended ms | sealed | open + resume to the end ms |',
    '|---|---|---|---|---|---|',
  ]
  for (const isolation of ['worker', 'inline'] as const) {
    const runtime = createQuickJSRuntime({
      isolation,
      secret: 'bench-secret-0123456789abcdef',
      limits: { memoryBytes: 512 * MiB },
    })
    await timed(runtime, () => req('return 1'), 50)
    await timed(runtime, () => durable('return 1'), 50)
    const plain: number[] = []
    const made: number[] = []
    const ratios: number[] = []
    for (let round = 0; round < ROUNDS; round++) {
      const p = await timed(runtime, () => req('return 1'), RUNS)
      const d = await timed(runtime, () => durable('return 1'), RUNS)
      plain.push(p)
      made.push(d)
      ratios.push(d / p)
    }
    lines.push(
      `| ${isolation} | ${median(plain).toFixed(0)} | ${median(made).toFixed(0)} | ${median(ratios).toFixed(2)}x (${spread(ratios)}) |`,
    )
    for (const mib of quick ? [1] : [1, 10]) {
      const code = `${dataProgram(mib).replace(/return [^\n]*$/, '')}\nconst yes = await tools.ask({}); return data.length + (yes ? 1 : 0)`
      parked.push(`| ${isolation} | ${mib} MiB | ${await parkedRuns(runtime, code, undefined)} |`)
    }
    // In a sandbox session that holds the data already: the suspension takes the session's state with it, and
    // the resume gives the session the state the program leaves.
    for (const mib of quick ? [1] : [1, 10]) {
      const session = `held-${mib}`
      const built = await runtime.run(req(dataProgram(mib), session))
      if (built.error !== undefined) throw new Error(built.error.message)
      parked.push(
        `| ${isolation} | ${mib} MiB, in a session | ${await parkedRuns(runtime, 'const yes = await tools.ask({}); return data.length + (yes ? 1 : 0)', session)} |`,
      )
    }
    await runtime.dispose()
  }
  return [...lines, ...parked]
}

if (process.argv.includes('--idle-only')) {
  console.log(JSON.stringify(await idleSessions()))
  process.exit(0)
}
console.log(`# sandbox sessions (QuickJS), ${machine()}${quick ? ', --quick' : ''}\n`)
const idle = process.argv.includes('--no-idle') ? [] : idleSessionsInFreshProcesses()
console.log(`## warm runs (${RUNS} runs per figure, medians of ${ROUNDS} interleaved rounds)\n`)
for (const line of await warmRuns()) console.log(line)
console.log(`\n## suspend and resume (inline, medians of ${ROUNDS})\n`)
for (const line of await suspendResume()) console.log(line)
console.log('')
for (const line of bytePlanes(32)) console.log(line)
console.log(`\n## idle sessions to the filesystem store (fresh processes, medians of ${ROUNDS} interleaved)\n`)
for (const line of idle) console.log(line)
console.log(`\n## durable runs (medians of ${ROUNDS} interleaved rounds)\n`)
for (const line of await durableRuns()) console.log(line)
