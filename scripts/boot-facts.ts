/**
 * Writes `sandbox/quickjs/src/engine/boot-facts.ts`: for each QuickJS variant, the SHA-256 of its WebAssembly
 * file and the used page count of a fresh boot, found by reading the booted memory (`searchUsedPages`). Run it
 * after upgrading quickjs-emscripten or changing what a boot runs (the prelude, the host functions); the test
 * `boot-facts.test.ts` says when it is due. It runs on plain node, as the built package does: the count found
 * inside vitest's module runner is one page lower (the same boot leaves another heap layout there, cause not
 * found), where the boot's check refuses the shipped count and searches.
 *
 *   node --conditions=@ptc/source --import tsx scripts/boot-facts.ts [--print]
 */
import { createHash } from 'node:crypto'
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { searchUsedPages } from '../sandbox/quickjs/src/engine/booted-memory.js'
import { EngineImage } from '../sandbox/quickjs/src/engine/image.js'
import { loadModule, wasmPath, type QuickJSVariantName } from '../sandbox/quickjs/src/engine/module.js'
import { ROOT } from './build-js.js'

/** The facts of one variant: its WebAssembly file's digest and a fresh boot's used page count. */
export async function bootFacts(variant: QuickJSVariantName): Promise<{ wasmSha256: string; usedPages: number }> {
  const wasmSha256 = createHash('sha256')
    .update(readFileSync(wasmPath(variant)))
    .digest('hex')
  const loaded = await loadModule(variant, 64 * 1024 * 1024)
  const image = EngineImage.boot(loaded)
  const usedPages = searchUsedPages(loaded.memory.buffer)
  image.dispose()
  return { wasmSha256, usedPages }
}

if (import.meta.url === `file://${process.argv[1] ?? ''}`) {
  const facts = { quickjs: await bootFacts('quickjs'), 'quickjs-ng': await bootFacts('quickjs-ng') }
  // `--print`: only prints them (the test compares them with the file's).
  if (process.argv.includes('--print')) {
    console.log(JSON.stringify(facts))
    process.exit(0)
  }
  const text = `import type { QuickJSVariantName } from './module.js'

/**
 * What a fresh boot of each variant leaves in its memory, written by \`scripts/boot-facts.ts\` (do not edit): the
 * used page count (4 KiB pages up to the last one with data) and the SHA-256 of the WebAssembly file it was found
 * with. A process's first boot checks this count instead of reading the whole fresh memory for it (each page no
 * one wrote costs a page fault: about 33 ms for the 10.7 MiB above the used part on the machine this was measured on).
 * Used only when the file compiled is the same; the boot checks the count either way (\`copyUsedMemory\`).
 */
export const BOOT_FACTS: Readonly<Record<QuickJSVariantName, { readonly wasmSha256: string; readonly usedPages: number }>> = {
${Object.entries(facts)
  .map(
    ([variant, f]) =>
      `  ${/^\w+$/.test(variant) ? variant : `'${variant}'`}: { wasmSha256: '${f.wasmSha256}', usedPages: ` +
      `${f.usedPages} },`,
  )
  .join('\n')}
}
`
  writeFileSync(join(ROOT, 'sandbox/quickjs/src/engine/boot-facts.ts'), text)
  console.log(JSON.stringify(facts))
}
