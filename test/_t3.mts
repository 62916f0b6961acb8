import { createQuickJSRuntime } from '@ptc/sandbox-quickjs'
import { EngineImage } from '../sandbox/quickjs/src/engine/image.js'
import * as sp from '../sandbox/runtime/src/session-program.js'
const t: Record<string, number[]> = {}
for (const m of ['capture', 'restore', 'reset'] as const) {
  const orig = (EngineImage.prototype as any)[m]
  ;(EngineImage.prototype as any)[m] = function (...a: any[]) { const s = performance.now(); try { return orig.apply(this, a) } finally { (t[m] ??= []).push(performance.now() - s) } }
}
const rt = createQuickJSRuntime({ isolation: 'inline' })
const call = async () => null
const med = (a: number[] = [0]) => a.sort((x, y) => x - y)[a.length >> 1]!.toFixed(3)
for (let round = 0; round < 3; round++) for (const session of [undefined, 's']) {
  for (const k of Object.keys(t)) delete t[k]
  const n = 300
  const s = performance.now()
  for (let i = 0; i < n; i++) await rt.run({ code: 'return 1', bindings: [], call, language: 'javascript', ...(session ? { session } : {}) })
  console.log(session ?? 'plain', 'per run', ((performance.now() - s) / n).toFixed(3), Object.entries(t).map(([k, v]) => `${k} ${med(v)} (${v.length})`).join(' '))
}
let s = performance.now(); for (let i = 0; i < 1000; i++) sp.wrapSessionProgram('return 1'); console.log('wrap', ((performance.now() - s)).toFixed(3), 'us')
await rt.dispose()
