import { EngineImage } from './image.js'
import { capFor, loadModule, type QuickJSVariantName } from './module.js'

/** Above this size a module's WASM memory is not reused (it cannot shrink): it is dropped instead. */
const KEEP_MEMORY_BELOW = 64 * 1024 * 1024

/**
 * Idle engine images of one thread, reused across runs so a run pays for neither a module nor a
 * runtime, a context and the prelude (see `EngineImage`). An image is used by one run at a time (its
 * module's capped memory is that run's ceiling); an image whose module trapped or grew large is dropped.
 */
export class ModuleCache {
  readonly #variant: QuickJSVariantName
  readonly #idle: EngineImage[] = []
  readonly #maxIdle: number

  constructor(variant: QuickJSVariantName, maxIdle = 2) {
    this.#variant = variant
    this.#maxIdle = maxIdle
  }

  /**
   * An image whose memory cap is exactly the one `guestBytes` calls for, the one holding session memory
   * `resident` if idle (a fresh module is loaded and booted when none is idle): the cap is what bounds the guest, so a
   * larger one would let it past its limit.
   */
  acquire(guestBytes: number, resident?: string): EngineImage | Promise<EngineImage> {
    const cap = capFor(guestBytes)
    // The image that holds the session's memory (`EngineImage.resident`) first: it needs no restore.
    const holder =
      resident === undefined
        ? -1
        : this.#idle.findIndex((image) => image.resident === resident && image.loaded.capBytes === cap)
    if (holder !== -1) return this.#idle.splice(holder, 1)[0] as EngineImage
    for (let i = this.#idle.length - 1; i >= 0; i--) {
      const image = this.#idle[i] as EngineImage
      if (image.loaded.capBytes === cap) {
        this.#idle.splice(i, 1)
        return image
      }
    }
    return loadModule(this.#variant, guestBytes).then((loaded) => EngineImage.boot(loaded))
  }

  /**
   * An idle image for runs limited to `guestBytes`, taken like `acquire` takes it, or undefined (nothing is loaded).
   */
  idle(guestBytes: number): EngineImage | undefined {
    const acquired = this.#idle.some((image) => image.loaded.capBytes === capFor(guestBytes))
      ? this.acquire(guestBytes)
      : undefined
    return acquired instanceof Promise ? undefined : acquired
  }

  /**
   * Keeps the image for the next run, or drops it (its module trapped or grew past reuse). When `maxIdle`
   * images are idle already, the one idle the longest is dropped instead: runs limited otherwise than the
   * image warmed at start (a harness's own `memoryBytes`) would else boot a fresh module each, about 35 ms
   * a run, while an image no run asks for held the place. Returns whether an image was dropped: its
   * WebAssembly memory is garbage from now on, resident until this thread's collector runs.
   */
  release(image: EngineImage, broken: boolean): boolean {
    if (broken || image.loaded.memory.buffer.byteLength > KEEP_MEMORY_BELOW) return true
    this.#idle.push(image)
    if (this.#idle.length <= this.#maxIdle) return false
    this.#idle.shift()
    return true
  }

  /** Whether `image` is idle here, kept for the next run. */
  keeps(image: EngineImage): boolean {
    return this.#idle.includes(image)
  }

  /** Drops the idle images, freeing each runtime (QuickJS's own leak check; a failure only drops it). */
  clear(): void {
    for (const image of this.#idle.splice(0)) {
      try {
        image.dispose()
      } catch {
        // The module goes with the image either way.
      }
    }
  }
}
