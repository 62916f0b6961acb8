import { createRequire } from 'node:module'
import { availableParallelism } from 'node:os'
import type { Worker } from 'node:worker_threads'
import { IMPORT_MESSAGE } from './prelude/missing.js'
import { spawnSourceWorker, startWorker } from './worker-argv.js'

/** Result of stripping TypeScript types from a program body. */
export type StripResult = { ok: true; code: string } | { ok: false; message: string; line: number; column: number }

/**
 * Removes erasable TypeScript syntax with sucrase (`transforms: ['typescript']`, no ES transforms).
 * Chosen by measurement (20-line program, warm, this machine): sucrase 0.10 ms vs ts-blank-space
 * 0.15 ms; cold import 50 ms vs 630 ms (ts-blank-space loads `typescript`, 23 MB, vs 1.7 MB). Sucrase
 * keeps every line where it was; columns shift where types were removed, and `mapStrippedColumn`
 * maps them back. Syntax errors come back with the line and column (1-based) of the model's code; so does an
 * `import` statement, as a failure saying that programs cannot import (`IMPORT_MESSAGE`).
 */
export function stripTypeScript(code: string): StripResult {
  let stripped: string
  try {
    stripped = sucrase().transform(code, SUCRASE_OPTIONS).code
  } catch (error) {
    return stripFailure(error instanceof Error ? error.message : String(error), (error as { loc?: unknown }).loc)
  }
  const at = importAt(stripped)
  if (at === undefined) return { ok: true, code: stripped }
  const lineOf = (text: string): string => text.split('\n')[at.line - 1] ?? ''
  const column = mapStrippedColumn(lineOf(code), lineOf(stripped), at.column)
  return { ok: false, message: IMPORT_MESSAGE, line: at.line, column }
}

// Unused imports are kept: sucrase would drop them silently, and the program would run as if they had worked.
const SUCRASE_OPTIONS = { transforms: ['typescript' as const], disableESTransforms: true, keepUnusedImports: true }

/** A word `import` anywhere: most programs never say it, and skip the tokenizer. */
const IMPORT_WORD = /(?<![\w$.])import(?![\w$])/

let acorn: typeof import('acorn') | undefined

/**
 * The 1-based position of the first `import` statement of a program's JavaScript (not `import(…)` nor
 * `import.meta`, which the engines refuse at run time), or undefined. The engines' own errors for it
 * (QuickJS: "expecting '('") do not say that programs cannot import. A text the tokenizer cannot read is
 * left to the engine, which reports its syntax error.
 */
function importAt(js: string): { line: number; column: number } | undefined {
  if (!IMPORT_WORD.test(js)) return undefined
  acorn ??= createRequire(import.meta.url)('acorn') as typeof import('acorn')
  try {
    let previousImport: { line: number; column: number } | undefined
    const options = { ecmaVersion: 'latest', sourceType: 'module', locations: true } as const
    for (const token of acorn.tokenizer(js, options)) {
      if (previousImport !== undefined) {
        if (token.type.label !== '(' && token.type.label !== '.') return previousImport
        previousImport = undefined
      }
      if (token.type.keyword === 'import' && token.loc !== undefined && token.loc !== null) {
        previousImport = { line: token.loc.start.line, column: token.loc.start.column + 1 }
      }
    }
    return previousImport
  } catch {
    return undefined
  }
}

let loaded: typeof import('sucrase') | undefined

/**
 * sucrase, required on first use: loading it blocks the thread (12-16 ms here built, 45-55 from its package),
 * which a thread that never strips (an engine worker imports this package for the rest of it) should not pay,
 * nor a process that only imports ptc. `preloadTypeScriptStripper` loads it ahead of the first program. Built,
 * it is `stripper.cjs` beside this chunk (sucrase bundled into one file: tsup.config.ts); from sources, the package.
 */
function sucrase(): typeof import('sucrase') {
  return (loaded ??= createRequire(import.meta.url)(
    import.meta.url.endsWith('.ts') ? 'sucrase' : './stripper.cjs',
  ) as typeof import('sucrase'))
}

/**
 * Loads sucrase on this thread soon, off the caller's path (a runtime calls it when it is created and
 * warms its engines), so that the first program is not the one that waits for it. Does nothing when
 * it is loaded already.
 */
export function preloadTypeScriptStripper(): void {
  if (loaded !== undefined) return
  setImmediate(() => {
    try {
      sucrase()
    } catch {
      // Not loadable here: the first program to strip reports it.
      return
    }
    // Its first transform compiles much of it (about 5 ms here): a small program takes that off the first run's path.
    stripTypeScript('const warm: { n: number }[] = [{ n: 1 }]; return (warm as unknown[]).length')
  }).unref()
}

function stripFailure(message: string, loc: unknown): StripResult {
  const at = (loc ?? {}) as { line?: unknown; column?: unknown }
  const line = typeof at.line === 'number' ? at.line : 1
  const column = typeof at.column === 'number' ? at.column + 1 : 1
  return { ok: false, message: message.replace(/\s*\(\d+:\d+\)\s*$/, ''), line, column }
}

/**
 * Programs up to this many UTF-16 units are prepared on the calling thread (sucrase strips about 4 MiB a
 * second here: 16 Ki units block the host for about 4 ms; a session program's parse, about 0.6 s per MiB,
 * 10 ms); longer ones on a worker thread (`prepareOffThread`).
 */
export const INLINE_STRIP_UNITS = 16 * 1024

/** What `prepareOffThread` does with a program. */
export interface PrepareJob {
  readonly code: string
  /** Strip its TypeScript (else it is JavaScript already). */
  readonly typescript: boolean
  /** Also make its session source (`wrapSessionSource` of the stripped code). */
  readonly session: boolean
}

/** What the worker of `prepareOffThread` posts: the stripped program and, when asked, its session source. */
export interface PreparedOffThread {
  readonly stripped: StripResult
  readonly source?: string
}

const prepareSlots = { free: Math.max(1, availableParallelism()), waiting: [] as (() => void)[] }

/**
 * Prepares a long program off the calling thread: a prepare worker (at most one per core at once; later
 * programs wait their turn; a worker waits `PREPARE_IDLE_MS` for the next program before it ends) strips it
 * and, for `job.session`, makes its session source. Resolves `undefined` when `signal` aborts first: that
 * worker is terminated, so a stopped run leaves no work behind. A worker that fails reports as a stripping
 * failure.
 */
export async function prepareOffThread(job: PrepareJob, signal: AbortSignal): Promise<PreparedOffThread | undefined> {
  if (prepareSlots.free === 0) {
    await new Promise<void>((resolve) => {
      const go = (): void => {
        signal.removeEventListener('abort', leave)
        resolve()
      }
      const leave = (): void => {
        const i = prepareSlots.waiting.indexOf(go)
        if (i !== -1) prepareSlots.waiting.splice(i, 1)
        resolve()
      }
      prepareSlots.waiting.push(go)
      signal.addEventListener('abort', leave, { once: true })
    })
    if (signal.aborted) return undefined
  } else {
    prepareSlots.free--
  }
  try {
    return await prepareInWorker(job, signal)
  } finally {
    const next = prepareSlots.waiting.shift()
    if (next !== undefined) next()
    else prepareSlots.free++
  }
}

/** `stripTypeScript` off the calling thread (`prepareOffThread` without a session source). */
export async function stripTypeScriptOffThread(code: string, signal: AbortSignal): Promise<StripResult | undefined> {
  return (await prepareOffThread({ code, typescript: true, session: false }, signal))?.stripped
}

/**
 * How long a prepare worker waits for the next program before it ends. A burst of long programs pays one
 * thread start (about 40 ms here, with the stripper's load) instead of one each, and a worker never ends
 * right after it answered: Node 20 once aborted a whole process (`NodePlatform::ForIsolate`) when a prepare
 * worker was terminated as soon as it had posted, while V8 still compiled for its isolate on a background
 * thread. Idle workers are unref'd: they never keep a process alive.
 */
export const PREPARE_IDLE_MS = 10_000

interface IdleWorker {
  readonly worker: Worker
  readonly timer: NodeJS.Timeout
}

/** Prepare workers waiting for a program, the one that answered last at the end. */
const idleWorkers: IdleWorker[] = []
let workersStarted = 0

/** How many prepare workers this process started, and how many wait now (for tests). */
export function prepareWorkerCounts(): { started: number; idle: number } {
  return { started: workersStarted, idle: idleWorkers.length }
}

/**
 * The prepare worker: built, `prepare-worker.js` beside this bundle's chunk (tsup's `prepare-worker` entry);
 * from sources (this module's URL ends in `.ts`), `prepare-worker.ts` through tsx. It answers each job posted
 * to it with one `PreparedOffThread`.
 */
function startPrepareWorker(): Worker {
  const here = import.meta.url
  const worker = here.endsWith('.ts')
    ? spawnSourceWorker(new URL('./prepare-worker.ts', here), undefined)
    : startWorker(new URL('./prepare-worker.js', here), {})
  workersStarted++
  // A worker that fails or ends while it waits leaves the idle list (a job's own listeners report the
  // failure of a worker at work); without an 'error' listener, its error would throw in this process.
  const gone = (): void => unpark(worker)
  worker.on('error', gone)
  worker.once('exit', gone)
  return worker
}

/** An idle worker (the one that answered last; `reused`), or a new one (always, when `fresh`). */
function takeWorker(fresh: boolean): { worker: Worker; reused: boolean } {
  const idle = fresh ? undefined : idleWorkers.pop()
  if (idle === undefined) return { worker: startPrepareWorker(), reused: false }
  clearTimeout(idle.timer)
  idle.worker.ref()
  return { worker: idle.worker, reused: true }
}

/** The prepare workers waiting for a program now (for tests). */
export function _idlePrepareWorkers(): readonly Worker[] {
  return idleWorkers.map((idle) => idle.worker)
}

function park(worker: Worker): void {
  worker.unref()
  const timer = setTimeout(() => {
    unpark(worker)
    void worker.terminate()
  }, PREPARE_IDLE_MS)
  timer.unref()
  idleWorkers.push({ worker, timer })
}

function unpark(worker: Worker): void {
  const i = idleWorkers.findIndex((idle) => idle.worker === worker)
  if (i === -1) return
  clearTimeout(idleWorkers[i]?.timer)
  idleWorkers.splice(i, 1)
}

/** Whether a prepare worker's answer has the shape of a `PreparedOffThread`. */
function isPrepared(message: unknown): message is PreparedOffThread {
  if (typeof message !== 'object' || message === null) return false
  const { stripped, source } = message as { stripped?: unknown; source?: unknown }
  if (source !== undefined && typeof source !== 'string') return false
  if (typeof stripped !== 'object' || stripped === null) return false
  const s = stripped as Record<string, unknown>
  return s.ok === true
    ? typeof s.code === 'string'
    : s.ok === false && typeof s.message === 'string' && typeof s.line === 'number' && typeof s.column === 'number'
}

/**
 * `job` on a prepare worker. An idle worker that fails or exits before it answers may have died while it
 * waited (its `exit` not yet delivered when it was taken): the job then goes once to a new worker (`fresh`).
 */
function prepareInWorker(job: PrepareJob, signal: AbortSignal, fresh = false): Promise<PreparedOffThread | undefined> {
  if (signal.aborted) return Promise.resolve(undefined)
  const failed = (why: string): PreparedOffThread => ({
    stripped: stripFailure(
      `${job.typescript ? 'TypeScript stripping' : 'Preparing the session program'} failed: ${why}`,
      undefined,
    ),
  })
  let taken: { worker: Worker; reused: boolean }
  try {
    taken = takeWorker(fresh)
  } catch (error) {
    return Promise.resolve(
      failed(`its worker did not start (${error instanceof Error ? error.message : String(error)})`),
    )
  }
  const { worker, reused } = taken
  return new Promise((resolve) => {
    // `keep`: the worker answered and waits for the next program; else it is terminated (an aborted job
    // leaves no work behind; a worker that failed or answered nonsense is not trusted with another).
    const release = (keep: boolean): void => {
      signal.removeEventListener('abort', onAbort)
      worker.off('message', onMessage)
      worker.off('error', onError)
      worker.off('exit', onExit)
      if (keep) park(worker)
      else void worker.terminate()
    }
    const done = (result: PreparedOffThread | undefined, keep: boolean): void => {
      release(keep)
      resolve(result)
    }
    const onAbort = (): void => done(undefined, false)
    const onMessage = (message: unknown): void => {
      if (isPrepared(message)) done(message, true)
      else done(failed('its worker answered something else'), false)
    }
    const lost = (why: string): void => {
      if (!reused) return done(failed(why), false)
      release(false)
      resolve(prepareInWorker(job, signal, true))
    }
    const onError = (error: Error): void => lost(error.message)
    const onExit = (): void => lost('its worker exited')
    signal.addEventListener('abort', onAbort, { once: true })
    worker.on('message', onMessage)
    worker.on('error', onError)
    worker.on('exit', onExit)
    worker.postMessage(job)
  })
}

/**
 * Maps a 1-based column of a stripped line back to the original line. Stripping only deletes text
 * from a line, so the stripped line is (almost always) a subsequence of the original: walk both
 * greedily. Falls back to the column unchanged when the lines do not align.
 */
export function mapStrippedColumn(original: string, stripped: string, column: number): number {
  const target = Math.min(Math.max(column - 1, 0), stripped.length)
  let i = 0
  for (let j = 0; j < target; j++) {
    const ch = stripped[j]
    while (i < original.length && original[i] !== ch) i++
    if (i >= original.length) return column
    i++
  }
  // Skip deleted text up to the character the column points at.
  const ch = stripped[target]
  if (ch !== undefined && ch !== ' ') {
    while (i < original.length && original[i] !== ch) i++
    if (i >= original.length) return column
  }
  return i + 1
}
