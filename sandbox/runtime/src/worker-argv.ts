import { createRequire } from 'node:module'
import { pathToFileURL } from 'node:url'
import { Worker, type WorkerOptions } from 'node:worker_threads'

const isInputType = (arg: string): boolean => arg === '--input-type' || arg.startsWith('--input-type=')

/** The options that preload a module, each followed by the module (or joined to it by `=`). */
const PRELOADS = new Set(['--import', '--require', '-r', '--loader', '--experimental-loader'])

/**
 * A module of a TypeScript loader (tsx, ts-node): by its package name, or a path or URL inside the package,
 * as tsx's own command passes it (`--require …/node_modules/tsx/dist/preflight.cjs`).
 */
const isTypeScriptLoader = (module: string): boolean =>
  /^(tsx|ts-node)(\/|$)/.test(module) || /[\\/]node_modules[\\/](tsx|ts-node)[\\/]/.test(module)

/**
 * `args` without --input-type (in both forms) and without the preloads of a TypeScript loader (in both
 * forms); undefined when there is neither.
 */
function workerArgs(args: readonly string[]): string[] | undefined {
  const kept: string[] = []
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] as string
    const eq = arg.indexOf('=')
    const flag = eq === -1 ? arg : arg.slice(0, eq)
    if (arg === '--input-type' || (PRELOADS.has(arg) && isTypeScriptLoader(args[i + 1] ?? ''))) i++
    else if (!isInputType(arg) && !(eq !== -1 && PRELOADS.has(flag) && isTypeScriptLoader(arg.slice(eq + 1))))
      kept.push(arg)
  }
  return kept.length === args.length ? undefined : kept
}

/**
 * The words of a `NODE_OPTIONS` value, split as Node splits it: spaces separate words, double quotes group
 * (and are dropped), a backslash inside quotes takes the next character as it is. Undefined for an open quote.
 */
function optionWords(text: string): string[] | undefined {
  const words: string[] = []
  let quoted = false
  let next = true
  for (let i = 0; i < text.length; i++) {
    let c = text[i] as string
    if (c === '\\' && quoted && i + 1 < text.length) c = text[++i] as string
    else if (c === ' ' && !quoted) {
      next = true
      continue
    } else if (c === '"') {
      quoted = !quoted
      continue
    }
    if (next) words.push(c)
    else words[words.length - 1] += c
    next = false
  }
  return quoted ? undefined : words
}

/** `NODE_OPTIONS` without a TypeScript loader's preloads, or undefined when it has none (or cannot be read). */
function workerNodeOptions(text: string | undefined): string | undefined {
  if (text === undefined || !/tsx|ts-node/.test(text)) return undefined
  const words = optionWords(text)
  const kept = words === undefined ? undefined : workerArgs(words)
  return kept?.map((w) => (/[\s"\\]/.test(w) ? `"${w.replace(/[\\"]/g, '\\$&')}"` : w)).join(' ')
}

/**
 * Starts a worker thread of the sandbox. It inherits the process's `execArgv` and `NODE_OPTIONS` as Node does
 * by default, except for two kinds of options:
 * - `--input-type`, which applies only to the process's own `--eval` text (a worker inheriting it fails to
 *   start: "--input-type can only be used with string input via --eval"), so a host started as
 *   `node --input-type=module -e …` can use worker isolation;
 * - the preloads of a TypeScript loader (tsx, ts-node), which the sandbox's workers do not need (they run
 *   built JavaScript): a host run under tsx gave each worker tsx's hooks thread and about 45 ms more to
 *   start (27 against 73 ms for an empty worker on the machine this was measured on), and its module
 *   loading went through the hooks. Other preloads reach the worker as they would.
 * Options a worker refuses when they are given explicitly (process-wide ones such as `--no-node-snapshot`)
 * are dropped, as inheriting them would have ignored them.
 */
export function startWorker(entry: string | URL, options: WorkerOptions): Worker {
  const execArgv = workerArgs(process.execArgv)
  const nodeOptions = options.env === undefined ? workerNodeOptions(process.env.NODE_OPTIONS) : undefined
  if (execArgv === undefined && nodeOptions === undefined) return new Worker(entry, options)
  const own: WorkerOptions = { ...options }
  if (nodeOptions !== undefined) own.env = { ...process.env, NODE_OPTIONS: nodeOptions }
  if (execArgv === undefined) return new Worker(entry, own)
  try {
    return new Worker(entry, { ...own, execArgv })
  } catch (error) {
    if ((error as { code?: unknown }).code !== 'ERR_WORKER_INVALID_EXEC_ARGV') throw error
    // "Initiated Worker with invalid execArgv flags: --a, --b"
    const refused = new Set(
      String((error as Error).message)
        .replace(/^[^:]*:\s*/, '')
        .split(/,\s*/),
    )
    return new Worker(entry, {
      ...own,
      execArgv: execArgv.filter((arg) => !refused.has(arg) && !refused.has(arg.split('=')[0] as string)),
    })
  }
}

/**
 * A worker running the TypeScript module `entry`, for a package run from its sources (under vitest, or
 * `--conditions=@ptc/source` with tsx): an `eval` worker registers tsx's ESM loader and imports it, with
 * `--conditions=@ptc/source` so workspace packages resolve to their sources (a worker does not inherit the
 * loader its parent runs under). Built packages start their `.js` entries with `startWorker`.
 */
export function spawnSourceWorker(entry: URL, workerData: unknown): Worker {
  // `require.resolve` finds the CommonJS build of `tsx/esm/api`; its ESM build sits beside it.
  const tsx = pathToFileURL(
    createRequire(import.meta.url)
      .resolve('tsx/esm/api')
      .replace(/\.cjs$/, '.mjs'),
  ).href
  const boot =
    `import(${JSON.stringify(tsx)}).then((m) => { m.register(); return ` + `import(${JSON.stringify(entry.href)}) })`
  return new Worker(boot, { eval: true, workerData, execArgv: ['--conditions=@ptc/source'] })
}
