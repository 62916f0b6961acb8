import { Buffer } from 'node:buffer'
import { PAGE_BYTES } from './booted-memory.js'
import { loadModule, type LoadedModule, type QuickJSVariantName } from './module.js'

/** What session runs need to know about a build, found once per thread and variant (`sessionFacts`). */
export interface SessionFacts {
  /** Offsets of the booted bytes that differ from one boot to the next. */
  readonly volatile: readonly number[]
  /** The page numbers (`PAGE_BYTES`) those bytes are on. */
  readonly volatilePages: ReadonlySet<number>
  /** Where the allocator's break is kept (`EngineImage.locateBreak`), when found. */
  readonly breakAt: number | undefined
}

/** What `sessionFacts` needs of a booted image (`EngineImage.boot`). */
export interface FactsImage {
  readonly loaded: LoadedModule
  locateBreak(): number | undefined
  dispose(): void
}

const facts = new Map<string, Promise<SessionFacts>>()

/**
 * Boots two throwaway modules and compares them word by word: the booted bytes that differ from one
 * boot to the next (two 8-byte seeds QuickJS draws when it creates a context, in bellard's 2025-09
 * build); then locates the allocator's break word in one of them.
 */
export function sessionFacts(
  variant: QuickJSVariantName,
  boot: (loaded: LoadedModule) => FactsImage,
): Promise<SessionFacts> {
  let found = facts.get(variant)
  if (found === undefined) {
    found = (async () => {
      const images = [boot(await loadModule(variant, 0)), boot(await loadModule(variant, 0))] as const
      const [a, b] = images.map((image) => Buffer.from(image.loaded.memory.buffer)) as [Buffer, Buffer]
      const end = Math.min(a.length, b.length)
      const offsets: number[] = []
      for (let start = 0; start < end; start += PAGE_BYTES) {
        const stop = Math.min(end, start + PAGE_BYTES)
        if (a.compare(b, start, stop, start, stop) === 0) continue
        // Whole 8-byte words: a byte of a seed may happen to be equal in the two boots.
        for (let at = start; at < stop; at += 8)
          if (a.compare(b, at, at + 8, at, at + 8) !== 0) for (let i = 0; i < 8; i++) offsets.push(at + i)
      }
      const breakAt = images[0].locateBreak()
      for (const image of images) image.dispose()
      return {
        volatile: Object.freeze(offsets),
        volatilePages: new Set(offsets.map((at) => Math.floor(at / PAGE_BYTES))),
        breakAt,
      }
    })()
    facts.set(variant, found)
  }
  return found
}
