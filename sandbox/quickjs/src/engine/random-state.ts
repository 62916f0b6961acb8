import { randomFillSync } from 'node:crypto'
import type { QuickJSContext } from 'quickjs-emscripten-core'
import type { LoadedModule } from './module.js'

/**
 * Random 64-bit words for `reseed`, drawn from the CSPRNG 512 at a time (one `randomFillSync` per run
 * cost about 14 µs here, a tenth of a warm run); each word is handed out once.
 */
const randomWords = new BigUint64Array(512)
let randomLeft = 0

function randomWord(): bigint {
  if (randomLeft === 0) {
    randomFillSync(randomWords)
    randomLeft = randomWords.length
  }
  randomLeft--
  const word = randomWords[randomLeft] as bigint
  randomWords[randomLeft] = 0n
  return word
}

/** Gives `Math.random` a fresh, non-zero xorshift64* state at `seedAt` of `buffer` (`locateRandomState`). */
export function seedRandomState(buffer: ArrayBuffer, seedAt: number): void {
  const word = new BigUint64Array(buffer, seedAt, 1)
  do word[0] = randomWord()
  while (word[0] === 0n)
}

/** The 64-bit xorshift64* step QuickJS's `Math.random` takes. */
function xorshift64(s: bigint): bigint {
  const M = (1n << 64n) - 1n
  s ^= s >> 12n
  s = (s ^ (s << 25n)) & M
  s ^= s >> 27n
  return s
}

/** The value `Math.random` returns for state `s` (QuickJS: the top 52 bits of `s * C` as a mantissa). */
function randomOf(s: bigint): number {
  const m = (s * 0x2545f4914f6cdd1dn) & ((1n << 64n) - 1n)
  const bits = new BigUint64Array([(m >> 12n) | 0x3ff0000000000000n])
  return (new Float64Array(bits.buffer)[0] as number) - 1
}

/** How far into the context struct to look for the random state (both variants keep it in the first 1 KiB). */
const CONTEXT_SPAN = 4096

/**
 * Where `Math.random`'s xorshift64* state lives: the one word of the context that advances by exactly one
 * xorshift step when `Math.random` runs, and whose output it explains.
 */
export function locateRandomState(loaded: LoadedModule, ctx: QuickJSContext): number {
  const base = (ctx as unknown as { ctx: { value: number } }).ctx.value
  const random = ctx.unwrapResult(ctx.evalCode('Math.random'))
  const read = (): BigUint64Array => new BigUint64Array(loaded.memory.buffer.slice(base, base + CONTEXT_SPAN))
  const before = read()
  const out = ctx.unwrapResult(ctx.callFunction(random, ctx.undefined))
  const value = ctx.getNumber(out)
  out.dispose()
  random.dispose()
  const after = read()
  const found: number[] = []
  for (let i = 0; i < before.length; i++) {
    const b = before[i] as bigint
    const a = after[i] as bigint
    if (a !== b && xorshift64(b) === a && randomOf(a) === value) found.push(base + i * 8)
  }
  if (found.length !== 1) {
    throw new Error(
      `cannot locate ${loaded.variant}'s Math.random state (${found.length} candidates): ` +
        'this engine build is not supported',
    )
  }
  return found[0] as number
}
