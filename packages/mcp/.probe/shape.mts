const rows = Array.from({ length: 100000 }, (_, i) => ({ id: i, name: `row ${i}`, email: `u${i}@example.com`, score: i * 1.5, tags: ['a', 'b'], active: i % 2 === 0, city: 'Berlin', zip: '10115', note: null, n: i }))
const arr = new Array(2e6).fill(0)
/** Upper bound of the extra characters indentation adds, or -1 past maxDepth. */
function indentExtra(value: unknown, maxDepth: number): number {
  let extra = 0
  const stack: unknown[] = [value]
  const depths: number[] = [0]
  while (stack.length > 0) {
    const v = stack.pop()
    const d = depths.pop()!
    if (typeof v !== 'object' || v === null) continue
    if (d >= maxDepth) return -1
    if (Array.isArray(v)) {
      if (v.length === 0) continue
      extra += v.length * (1 + 2 * (d + 1)) + 1 + 2 * d
      for (let i = 0; i < v.length; i++) { const x = v[i]; if (typeof x === 'object' && x !== null) { stack.push(x); depths.push(d + 1) } }
    } else {
      let n = 0
      for (const k in v) { n++; const x = (v as Record<string, unknown>)[k]; if (typeof x === 'object' && x !== null) { stack.push(x); depths.push(d + 1) } }
      if (n > 0) extra += n * (2 + 2 * (d + 1)) + 1 + 2 * d
    }
  }
  return extra
}
for (const [name, v] of [['rows', rows], ['zeros', arr]] as const) for (let k = 0; k < 3; k++) {
  let t = performance.now(); const e = indentExtra(v, 64); const ts = performance.now() - t
  const c = JSON.stringify(v).length; const p = JSON.stringify(v, null, 2).length
  console.log(name, 'scan', ts.toFixed(1), 'ms; bound', c + e, 'actual', p)
}
