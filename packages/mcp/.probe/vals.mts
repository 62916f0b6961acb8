import { snapshotJson, prettyJson } from '@ptc/tools'
const o = Object.fromEntries(Array.from({ length: 300000 }, (_, i) => [`k${i}`, i]))
const s = (snapshotJson(o) as any).value
for (const [name, v] of [['plain', o], ['snapshot', s]] as const) for (let k = 0; k < 3; k++) {
  let t = performance.now(); const vals = Object.values(v); const tv = performance.now() - t
  t = performance.now(); let n = 0; for (const key in v) { if (typeof v[key] === 'object') n++ } const tf = performance.now() - t
  t = performance.now(); prettyJson(v); const tp = performance.now() - t
  t = performance.now(); JSON.stringify(v, null, 2); const tn = performance.now() - t
  console.log(name, 'values', tv.toFixed(1), 'forin', tf.toFixed(1), 'pretty', tp.toFixed(1), 'native', tn.toFixed(1), Object.isFrozen(v), vals.length, n)
}
for (let k = 0; k < 3; k++) {
  let t = performance.now(); const keys = Object.keys(o); let n = 0; for (let i = 0; i < keys.length; i++) { if (typeof o[keys[i]!] === 'object') n++ } const tk = performance.now() - t
  const small = Array.from({ length: 100000 }, (_, i) => ({ id: i, name: `row ${i}`, email: `u${i}@example.com`, score: i * 1.5, tags: ['a', 'b'], active: i % 2 === 0 }))
  t = performance.now(); for (const r of small) Object.values(r); const tsv = performance.now() - t
  t = performance.now(); for (const r of small) { const ks = Object.keys(r); for (let i = 0; i < ks.length; i++) (r as any)[ks[i]!] } const tsk = performance.now() - t
  t = performance.now(); for (const r of small) { for (const key in r) (r as any)[key] } const tsf = performance.now() - t
  console.log('keys+lookup', tk.toFixed(1), 'rows: values', tsv.toFixed(1), 'keys', tsk.toFixed(1), 'forin', tsf.toFixed(1))
}
