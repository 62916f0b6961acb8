import type { QuickJSVariantName } from './module.js'

/**
 * What a fresh boot of each variant leaves in its memory, written by `scripts/boot-facts.ts` (do not edit): the
 * used page count (4 KiB pages up to the last one with data) and the SHA-256 of the WebAssembly file it was found
 * with. A process's first boot checks this count instead of reading the whole fresh memory for it (each page no
 * one wrote costs a page fault: about 33 ms for the 10.7 MiB above the used part on the machine this was measured on).
 * Used only when the file compiled is the same; the boot checks the count either way (`copyUsedMemory`).
 */
export const BOOT_FACTS: Readonly<Record<QuickJSVariantName, { readonly wasmSha256: string; readonly usedPages: number }>> = {
  quickjs: { wasmSha256: '105c3bed22d457e43e3d1c3c1c6959fda62a8fe06f0fc8a985303c3a2be72232', usedPages: 1362 },
  'quickjs-ng': { wasmSha256: 'b56fe5094b8751c47b8c32fb5ed4d75afe2dbb43412d3d983ac5d1156af456da', usedPages: 1365 },
}
