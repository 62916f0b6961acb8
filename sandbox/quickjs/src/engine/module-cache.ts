import { loadModule, type LoadedModule, type QuickJSVariantName } from './module.js'

/** Above this size a module's WASM memory is not reused (it cannot shrink): it is dropped instead. */
const KEEP_MEMORY_BELOW = 64 * 1024 * 1024

/**
 * Idle QuickJS modules of one thread, reused across runs so a run pays for a runtime and a context,
 * not a module. A module is used by one run at a time (its capped memory is that run's ceiling);
 * a module that trapped, failed its leak check, or grew large is dropped.
 */
export class ModuleCache {
  readonly #variant: QuickJSVariantName
  readonly #idle: LoadedModule[] = []
  readonly #maxIdle: number

  constructor(variant: QuickJSVariantName, maxIdle = 2) {
    this.#variant = variant
    this.#maxIdle = maxIdle
  }

  /** A module whose memory cap fits `guestBytes` (loaded when none is idle). */
  acquire(guestBytes: number): LoadedModule | Promise<LoadedModule> {
    for (let i = this.#idle.length - 1; i >= 0; i--) {
      const m = this.#idle[i] as LoadedModule
      if (m.capBytes >= guestBytes) {
        this.#idle.splice(i, 1)
        return m
      }
    }
    return loadModule(this.#variant, guestBytes)
  }

  release(module: LoadedModule, broken: boolean): void {
    if (broken || module.memory.buffer.byteLength > KEEP_MEMORY_BELOW) return
    if (this.#idle.length < this.#maxIdle) this.#idle.push(module)
  }

  clear(): void {
    this.#idle.length = 0
  }
}
