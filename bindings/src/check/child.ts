import { spawn, type ChildProcess } from 'node:child_process'
import { createRequire } from 'node:module'
import { pathToFileURL } from 'node:url'
import type { RenderDeclarationsOptions } from '../render/declarations.js'
import type { CheckProgramOptions, CheckProgramResult } from './check-program.js'

/** A catalog as the checker's process gets it: its names. It asks for the tools it needs (`{ need }`). */
export interface _CatalogData {
  readonly names: readonly string[]
  /** What the catalog gives for a name: its schemas (`tool`) or its declaration. */
  readonly gives: 'tool' | 'declaration'
  readonly searchTools?: boolean
  readonly render?: RenderDeclarationsOptions
}

/** The job the checker's process gets first. */
export interface _ChildRequest {
  readonly code: string
  readonly sdk: string | _CatalogData
  readonly options: CheckProgramOptions
}
/**
 * What the checker's process sends, in order: `{ ready }` once `typescript` is loaded; for a catalog `{ need }`
 * (answered with `{ found }`, a tool or declaration per name); the result or the error.
 */
export type _ChildMessage = { ready: true } | { need: string[] } | { result: CheckProgramResult } | { error: unknown }

/**
 * The checker's program (an ES module given to `node -e`). It uses only the public API of the package's `check`
 * entry: `checkedToolNames` to ask for a catalog's tools, then `checkProgram`.
 */
const program = (entry: string, preload: string): string => `
const next = () => new Promise((resolve) => process.once('message', resolve))
const job = next()
const send = (message) => {
  try { process.send(message) } catch (error) { process.send({ error: new Error(String(message.error ?? error)) }) }
}
try {
  ${preload}
  const { checkProgram, checkedToolNames } = await import(${JSON.stringify(entry)})
  if (typeof checkProgram !== 'function') throw new Error(${JSON.stringify(`${entry} does not export checkProgram`)})
  // Loads typescript and parses the lib files: the checker's start, not the program's time.
  checkProgram('', '')
  send({ ready: true })
  const { code, sdk, options } = await job
  let source = sdk
  if (typeof sdk !== 'string') {
    const names = () => sdk.names
    const need = checkedToolNames(code, { ...sdk, catalog: { names, tool: () => undefined } }, options)
    const reply = next()
    send({ need })
    const { found } = await reply
    const byName = new Map(need.map((name, i) => [name, found[i]]))
    const read = (name) => byName.get(name)
    source = { ...sdk, catalog: sdk.gives === 'declaration' ? { names, declaration: read } : { names, tool: read } }
  }
  send({ result: checkProgram(code, source, options) })
} catch (error) {
  send({ error })
}
process.disconnect()
`

/** tsx's ESM loader, for a process that imports this package's TypeScript sources (under vitest, from source). */
function tsxPreload(): string {
  // `require.resolve` finds the CommonJS build of `tsx/esm/api`; its ESM build sits beside it.
  const api = pathToFileURL(
    createRequire(import.meta.url)
      .resolve('tsx/esm/api')
      .replace(/\.cjs$/, '.mjs'),
  ).href
  return `(await import(${JSON.stringify(api)})).register()`
}

/**
 * Starts the checker's process with a heap of `maxMemoryMb`. Built (`dist/check/index.js`, where this module is
 * bundled), it imports that file; from source (this module's URL ends in `.ts`), `./index.ts` through tsx with
 * `--conditions=@ptc/source`. Node's options for this process (`NODE_OPTIONS`, `execArgv`) are not passed on.
 */
export function _startChecker(maxMemoryMb: number): ChildProcess {
  const here = import.meta.url
  const source = here.endsWith('.ts')
  const text = program(new URL(source ? './index.ts' : './index.js', here).href, source ? tsxPreload() : '')
  const { NODE_OPTIONS: _ignored, ...env } = process.env
  const args = [`--max-old-space-size=${maxMemoryMb}`, ...(source ? ['--conditions=@ptc/source'] : [])]
  return spawn(process.execPath, [...args, '--input-type=module', '--eval', text], {
    env,
    stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
    serialization: 'advanced',
  })
}
