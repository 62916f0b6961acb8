import { createQuickJSRuntime } from '@ptc/sandbox-quickjs'
import { createFileSessionStore } from '@ptc/sandbox/session'
import { writeFileSync, readFileSync } from 'node:fs'
const [mode, isolation] = process.argv.slice(2) as [string, 'worker' | 'inline']
const secret = 'a-secret-of-32-bytes-for-testing!'
const call = async (_n: string, a: any) => a
if (mode === 'suspend') {
  const rt = createQuickJSRuntime({ isolation, sessions: { secret } })
  await rt.run({ code: 'const m = new Map([["k", [1,2]]]); function hello(n) { return "hi " + n } class P { constructor(x) { this.x = x } }; globalThis.data = Array.from({length: 50000}, (_, i) => ({ i, s: "v" + i }))', bindings: [], call, session: 'k1' })
  const t = performance.now()
  const bytes = await rt.suspendSession!('k1')
  console.log('suspend ms', (performance.now() - t).toFixed(1), 'bytes', bytes!.byteLength)
  writeFileSync('/tmp/sess/k1.snap', bytes!)
  await rt.dispose()
} else if (mode === 'resume') {
  const rt = createQuickJSRuntime({ isolation, sessions: { secret } })
  const bytes = readFileSync('/tmp/sess/k1.snap')
  const t = performance.now()
  await rt.resumeSession!('k1', bytes)
  console.log('resume ms', (performance.now() - t).toFixed(1))
  const r = await rt.run({ code: 'return [m.get("k"), hello("x"), new P(3).x, data.length, data[49999].s]', bindings: [], call, session: 'k1' })
  console.log(JSON.stringify(r.value), r.error, r.session)
  for (const [k, b] of [['k2', bytes], ['k1', bytes.subarray(0, 1000)], ['k1', Buffer.concat([bytes.subarray(0, 500), Buffer.from([bytes[500]! ^ 1]), bytes.subarray(501)])]] as const) {
    try { await rt.resumeSession!(k, b); console.log('accepted?!') } catch (e: any) { console.log(e.name, e.code, e.message.slice(0, 100)) }
  }
  const r2 = await rt.run({ code: 'return data.length', bindings: [], call, session: 'k1' })
  console.log('after refusals', r2.value)
  const other = createQuickJSRuntime({ isolation, sessions: { secret: 'another-secret-32-bytes-long!!!!' } })
  try { await other.resumeSession!('k1', bytes) } catch (e: any) { console.log(e.code) }
  await other.dispose()
  await rt.dispose()
} else if (mode === 'store') {
  const store = createFileSessionStore({ directory: '/tmp/sess/store' })
  const rt = createQuickJSRuntime({ isolation, sessions: { secret, store, suspendAfterMs: 100 } })
  for (let i = 0; i < 3; i++) await rt.run({ code: `globalThis.n = (globalThis.n ?? 0) + 1; return n`, bindings: [], call, session: 's' + i })
  await new Promise((r) => setTimeout(r, 1500))
  const rt2 = createQuickJSRuntime({ isolation, sessions: { secret, store } })
  for (let i = 0; i < 3; i++) { const r = await rt2.run({ code: `globalThis.n += 1; return n`, bindings: [], call, session: 's' + i }); console.log(r.value, r.session) }
  await rt.dispose(); await rt2.dispose()
}
