const a: unknown[] & { extra?: number } = new Array(2e6).fill(0)
for (let k = 0; k < 3; k++) {
  let t = performance.now(); let n = 0; for (const key in a) { n++ } ; const tf = performance.now() - t
  const b = a.slice(); (b as any).extra = 1
  t = performance.now(); const d = Object.getOwnPropertyDescriptor(b, 'extra'); const td = performance.now() - t
  console.log('for-in', tf.toFixed(1), n, td.toFixed(3))
}
