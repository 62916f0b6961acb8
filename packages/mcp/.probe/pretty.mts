import { prettyJson } from '@ptc/tools'
const rows = Array.from({ length: 100000 }, (_, i) => ({ id: i, name: `row ${i}`, email: `u${i}@example.com`, score: i * 1.5, tags: ['a', 'b'], active: i % 2 === 0, city: 'Berlin', zip: '10115', note: null, n: i }))
const arr = new Array(2e6).fill(0)
for (const [name, v] of [['rows', rows], ['zeros', arr]] as const) {
  for (let k = 0; k < 3; k++) {
    let t = performance.now(); const a = prettyJson(v as never); const tp = performance.now() - t
    t = performance.now(); const b = JSON.stringify(v, null, 2); const tn = performance.now() - t
    console.log(name, 'prettyJson', tp.toFixed(0), 'ms; native', tn.toFixed(0), 'ms; same', a === b, a.length)
  }
}
