/**
 * The raw-library baseline for worker isolation, run in a worker thread by `rawWorkerSubCalls`
 * (./baseline.ts): quickjs-emscripten driven directly, one `postMessage` to the host per sub-call and
 * one back per result, each result resolving a `newPromise()` and pumping jobs — the shape of the
 * inline raw baseline plus the thread hop worker isolation cannot avoid. Plain JavaScript: a worker
 * does not inherit the TypeScript loader the bench scripts run under.
 */
import { createRequire } from 'node:module'
import { URL, pathToFileURL } from 'node:url'
import { parentPort } from 'node:worker_threads'

// The library is a dependency of @ptc/sandbox-quickjs, not of the workspace root: resolve it from there.
const fromQuickJS = createRequire(new URL('../../sandbox/quickjs/package.json', import.meta.url))
const load = async (name) => import(pathToFileURL(fromQuickJS.resolve(name)).href)
const core = await load('quickjs-emscripten-core')
const variant = await load('@jitl/quickjs-wasmfile-release-sync')
const mod = await core.newQuickJSWASMModuleFromVariant(variant.default)
const port = parentPort
let run

/** Runs `code` (the same program as the inline raw baseline, see `rawProgram`) with `tool` bound. */
function start(code) {
  const rt = mod.newRuntime()
  const ctx = rt.newContext()
  const pending = new Map()
  let next = 0
  const tool = ctx.newFunction('tool', (arg) => {
    const id = ++next
    const deferred = ctx.newPromise()
    pending.set(id, deferred)
    port.postMessage({ t: 'call', id, value: ctx.getNumber(arg) })
    return deferred.handle
  })
  ctx.setProp(ctx.global, 'tool', tool)
  tool.dispose()
  run = { rt, ctx, result: ctx.unwrapResult(ctx.evalCode(code)), pending }
  rt.executePendingJobs()
}

function settle(id, value) {
  const { rt, ctx, result, pending } = run
  const deferred = pending.get(id)
  pending.delete(id)
  const h = ctx.newNumber(value)
  deferred.resolve(h)
  h.dispose()
  deferred.dispose()
  rt.executePendingJobs()
  if (pending.size === 0 && ctx.getPromiseState(result).type !== 'pending') {
    result.dispose()
    ctx.dispose()
    rt.dispose()
    run = undefined
    port.postMessage({ t: 'done' })
  }
}

port.on('message', (m) => (m.t === 'run' ? start(m.code) : settle(m.id, m.value)))
port.postMessage({ t: 'ready' })
