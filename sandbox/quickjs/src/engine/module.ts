import { createHash } from 'node:crypto'
import { readFile } from 'node:fs/promises'
import { createRequire } from 'node:module'
import { newQuickJSWASMModuleFromVariant, newVariant, type QuickJSWASMModule } from 'quickjs-emscripten-core'
import bellard from '@jitl/quickjs-wasmfile-release-sync'
import ng from '@jitl/quickjs-ng-wasmfile-release-sync'
import { utcTimeImports } from './utc-clock.js'

/** Which QuickJS: bellard's (default) or quickjs-ng. */
export type QuickJSVariantName = 'quickjs' | 'quickjs-ng'

const PAGE = 64 * 1024
/** Initial WASM memory the emscripten build expects (16 MiB). */
const INITIAL_BYTES = 16 * 1024 * 1024
/**
 * Room above the guest's memory limit for the engine itself: its data, the 5 MiB C stack and the
 * booted runtime take about 5.4 MiB. The cap is what bounds a guest: QuickJS's `setMemoryLimit`
 * counts 8 bytes per allocation in this build, so it only stops single allocations past the limit.
 * (8 MiB was tried: the hostile suite's self-scheduling promise chain then ran out of memory before
 * its 500 ms CPU budget in 2 of about 10 loaded full-suite runs, which is not understood yet.)
 */
export const ENGINE_OVERHEAD_BYTES = 32 * 1024 * 1024

/** The memory both QuickJS builds declare as their most (32 768 pages of WebAssembly): 2 GiB. */
const MODULE_MAX_BYTES = 32_768 * PAGE

/** The most memory a run can be given (`memoryBytes`): the module's most, less the engine's own. */
export const MAX_GUEST_BYTES = MODULE_MAX_BYTES - ENGINE_OVERHEAD_BYTES

/** The WebAssembly memory cap of a module for runs limited to `guestBytes`. */
export function capFor(guestBytes: number): number {
  return Math.ceil(Math.max(INITIAL_BYTES, guestBytes + ENGINE_OVERHEAD_BYTES) / PAGE) * PAGE
}

/** The slice of the WebAssembly API used here (Node has it; this project's `lib` has no DOM types). */
export interface WasmMemory {
  readonly buffer: ArrayBuffer
  grow(pages: number): number
}
export type WasmModule = object
const Wasm = (
  globalThis as unknown as {
    WebAssembly: {
      Memory: new (descriptor: { initial: number; maximum: number }) => WasmMemory
      compile(bytes: Uint8Array): Promise<WasmModule>
      Instance: new (module: WasmModule, imports: object) => { readonly exports: object }
    }
  }
).WebAssembly

const compiled = new Map<QuickJSVariantName, Promise<WasmModule>>()
/** The SHA-256 (hex) of the WebAssembly file each variant was compiled from on this thread (`wasmDigest`). */
const digests = new Map<QuickJSVariantName, string>()

/**
 * The WebAssembly module of `variant`, compiled once per thread, or the one this thread adopted
 * (`adoptCompiled`). A module passed to a worker thread shares its machine code with the thread that
 * compiled it: a function V8 compiles on first call (lazily) in one thread is compiled for all of them.
 */
export function compile(variant: QuickJSVariantName): Promise<WasmModule> {
  let p = compiled.get(variant)
  if (p === undefined) {
    p = readFile(wasmPath(variant)).then((bytes) => {
      digests.set(variant, createHash('sha256').update(bytes).digest('hex'))
      return Wasm.compile(bytes)
    })
    compiled.set(variant, p)
  }
  return p
}

/**
 * The SHA-256 (hex) of the WebAssembly file this thread compiled `variant` from (about 0.3 ms for its 0.5 MB);
 * undefined before that, or when the thread adopted another thread's module (`adoptCompiled`).
 */
export function wasmDigest(variant: QuickJSVariantName): string | undefined {
  return digests.get(variant)
}

/** Where the WebAssembly file of `variant` is (its npm package's `wasm` export). */
export function wasmPath(variant: QuickJSVariantName): string {
  const pkg = variant === 'quickjs' ? '@jitl/quickjs-wasmfile-release-sync' : '@jitl/quickjs-ng-wasmfile-release-sync'
  return createRequire(import.meta.url).resolve(`${pkg}/wasm`)
}

/**
 * Uses `module` (compiled by another thread, see `compile`) as this thread's module of `variant`, unless it has one.
 */
export function adoptCompiled(variant: QuickJSVariantName, module: WasmModule): void {
  if (!compiled.has(variant)) compiled.set(variant, Promise.resolve(module))
}

/** A QuickJS WASM module with its own memory, capped so a guest can never grow it past `capBytes`. */
export interface LoadedModule {
  readonly module: QuickJSWASMModule
  readonly memory: WasmMemory
  readonly capBytes: number
  readonly variant: QuickJSVariantName
  /** How many times WebAssembly refused to grow the memory (the cap was reached). */
  readonly growth: { refused: number }
}

/**
 * The program name the engine's C library is given (emscripten's `thisProgram`), the same in every thread and
 * process. emscripten's default is the host's `process.argv[1]`, which it copies into the module's memory with the
 * environment when the module starts: the boot's allocations then shifted with the length of the host script's
 * path (the main thread's script, or the worker's entry file), so a session suspended by one process was refused
 * by another started from another path, or by the other isolation, as "made by another engine build".
 */
const PROGRAM_NAME = 'ptc-quickjs'

/** Engine modules starting in this thread now (see `hidingNavigator`). */
let starting = 0

/**
 * Runs `load` (an engine module's start) with `globalThis.navigator` hidden from emscripten's glue. The glue gives
 * the C library an environment whose `LANG` comes from `navigator.language`, which Node 21 and later define from the
 * host's locale: the booted memory then differed by Node line and locale, and a session sealed on Node 20, or on a
 * host with another locale, was refused as "made by another engine build". Hidden, `LANG` is `C.UTF-8` everywhere,
 * as on Node 20. Other code reading `navigator` meanwhile still gets it: only reads from the glue's file are hidden.
 */
async function hidingNavigator<T>(load: () => Promise<T>): Promise<T> {
  const own = Object.getOwnPropertyDescriptor(globalThis, 'navigator')
  if (own === undefined || own.configurable !== true) return load()
  const real = (): unknown => (own.get !== undefined ? own.get.call(globalThis) : own.value)
  if (starting++ === 0) {
    Object.defineProperty(globalThis, 'navigator', {
      configurable: true,
      enumerable: own.enumerable ?? true,
      get: () => (new Error().stack?.includes('emscripten-module') === true ? undefined : real()),
    })
  }
  try {
    return await load()
  } finally {
    if (--starting === 0) Object.defineProperty(globalThis, 'navigator', own)
  }
}

/**
 * A fresh module from the precompiled WebAssembly module (compiled once per thread and variant)
 * with a `WebAssembly.Memory` whose maximum is `guestBytes + ENGINE_OVERHEAD_BYTES`: the hard cap
 * (QuickJS's own `setMemoryLimit` alone does not bound the total).
 */
export async function loadModule(variant: QuickJSVariantName, guestBytes: number): Promise<LoadedModule> {
  const wasmModule = await compile(variant)
  const capBytes = capFor(guestBytes)
  const memory = new Wasm.Memory({ initial: INITIAL_BYTES / PAGE, maximum: capBytes / PAGE })
  // emscripten's heap resize calls `grow` on this object and swallows the RangeError: count them, so a
  // run can tell that its out-of-memory came from the cap.
  const growth = { refused: 0 }
  const grow = memory.grow.bind(memory)
  memory.grow = (pages: number): number => {
    try {
      return grow(pages)
    } catch (error) {
      growth.refused++
      throw error
    }
  }
  const base = variant === 'quickjs' ? bellard : ng
  // The module is instantiated here rather than by quickjs-emscripten's `wasmModule` option: its imports get a UTC
  // calendar first (`utcTimeImports`), and an instantiation that fails throws (the option's asynchronous one left
  // the load waiting forever).
  const instantiateWasm = (
    imports: Record<string, Record<string, unknown>>,
    onSuccess: (instance: object, module: WasmModule) => void,
  ): object => {
    utcTimeImports(imports, memory)
    const instance = new Wasm.Instance(wasmModule, imports)
    onSuccess(instance, wasmModule)
    return instance.exports
  }
  const module = await hidingNavigator(() =>
    newQuickJSWASMModuleFromVariant(
      newVariant(base, {
        wasmMemory: memory as never,
        emscriptenModule: { thisProgram: PROGRAM_NAME, instantiateWasm } as never,
      }),
    ),
  )
  return { module, memory, capBytes, variant, growth }
}
