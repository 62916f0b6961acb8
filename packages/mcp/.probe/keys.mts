const a = new Array(2e6).fill(0)
const hasOwn = Object.prototype.hasOwnProperty
for (let k = 0; k < 3; k++) {
  let t = performance.now(); let n = 0; for (let i = 0; i < a.length; i++) if (hasOwn.call(a, i)) n++; const th = performance.now() - t
  t = performance.now(); const keys = Object.keys(a); const tk = performance.now() - t
  t = performance.now(); const items = new Array(a.length); for (let i = 0; i < a.length; i++) items[i] = a[i]; const tc = performance.now() - t
  t = performance.now(); const items2 = a.slice(); const ts = performance.now() - t
  console.log('hasOwn', th.toFixed(1), 'keys', tk.toFixed(1), keys.length, 'copy', tc.toFixed(1), 'slice', ts.toFixed(1), n, items.length, items2.length)
}
