import { loadModule } from '../sandbox/quickjs/src/engine/module.js'
import { EngineImage } from '../sandbox/quickjs/src/engine/image.js'
const imgs = []
for (let i = 0; i < 2; i++) imgs.push(EngineImage.boot(await loadModule('quickjs', 64 << 20)))
const a = new Uint8Array(imgs[0]!.loaded.memory.buffer), b = new Uint8Array(imgs[1]!.loaded.memory.buffer)
const diffs: number[] = []
for (let i = 0; i < Math.min(a.length, b.length); i++) if (a[i] !== b[i]) diffs.push(i)
console.log(imgs.map((x) => x.fingerprint), diffs.length, diffs.slice(0, 40))
console.log((imgs[0] as any).constructor.name)
for (const im of imgs) {
  const dv = new DataView(im.loaded.memory.buffer)
  console.log('seedAt', (im as any)['seedAt'], 'f64@5348192', dv.getFloat64(5348192 - 2, true), dv.getFloat64(5348192, true), 'u64', dv.getBigUint64(5348192, true), dv.getBigUint64(5348192 - 2, true), dv.getBigUint64(5348188, true))
}
console.log(Date.now(), performance.timeOrigin, process.hrtime.bigint())
