import { loadModule } from '../sandbox/quickjs/src/engine/module.js'
import { EngineImage } from '../sandbox/quickjs/src/engine/image.js'
import { writeFileSync } from 'node:fs'
const im = EngineImage.boot(await loadModule('quickjs', 256 << 20))
await im.prepareSessions()
const off = (im as any)['volatileOffsets'] 
console.log(im.fingerprint)
// dump booted bytes via capture of a no-op? use private via bracket not possible; recompute
const cap = im.capture()
writeFileSync(process.argv[2]!, Buffer.from(JSON.stringify({ ranges: [...cap.ranges] })))
