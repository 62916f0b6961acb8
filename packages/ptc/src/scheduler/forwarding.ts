/**
 * What a program's tool calls bring along with its `run_code` result: deferred contexts, image content and a
 * concluding success. The contexts and images go up to `maxForwardedChars` in all (each whole or not at all),
 * what did not fit said in one note: a program's calls must not flood the model's context unbounded.
 */
import type { ImageBlock, ToolExecutionResult, ToolRunContext } from '@ptc/tools'
import * as messages from '../messages.js'

/** `PtcExecutorOptions.maxForwardedChars` when not given: 8 Mi characters (about 6 MB of images). */
export const DEFAULT_MAX_FORWARDED_CHARS = 8 * 1024 * 1024

/**
 * The characters of an image block's JSON besides its data and MIME type
 * (`{"type":"image","mimeType":"","data":""}`).
 */
const IMAGE_BLOCK_CHARS = 40

/** The length of `value`'s JSON text; infinite for one too deeply nested to write (it never fits). */
function jsonChars(value: unknown): number {
  try {
    return JSON.stringify(value).length
  } catch {
    return Number.POSITIVE_INFINITY
  }
}

/** One program's forwarding to `ctx`, the call its result goes with. */
export class Forwarding {
  /** What the calls' contexts and images may still bring along (characters), of `#max`. */
  #left: number
  readonly #max: number
  #leftOut = { images: 0, messages: 0 }

  constructor(
    private readonly ctx: ToolRunContext,
    max: number,
  ) {
    this.#left = max
    this.#max = max
  }

  /** Hands what one call's result brings along to the program's call, as far as it fits. */
  forward(result: ToolExecutionResult): void {
    for (const context of result.additionalContexts ?? []) {
      if (this.#fits(jsonChars(context))) this.ctx.deferContext(context)
      else this.#leftOut.messages++
    }
    // Each block counts its JSON around the data too, or any number of empty images would fit.
    const images = result.content.filter(
      (b): b is ImageBlock =>
        b.type === 'image' &&
        (this.#fits(IMAGE_BLOCK_CHARS + b.data.length + b.mimeType.length) || (this.#leftOut.images++, false)),
    )
    if (images.length > 0) this.ctx.deferContext({ role: 'user', content: images })
    if (!result.isError && result.concludesTurn === true) this.ctx.concludeTurn()
  }

  /** The note on the contexts and images `forward` left out, once (as the program ends). */
  noteLeftOut(): void {
    const { images, messages: texts } = this.#leftOut
    if (images + texts === 0) return
    this.#leftOut = { images: 0, messages: 0 }
    const text = messages.leftOut(images, texts, this.#max)
    this.ctx.deferContext({ role: 'user', content: [{ type: 'text', text }] })
  }

  /** Whether `chars` more fit in what the calls may still bring along; they are counted if so. */
  #fits(chars: number): boolean {
    if (chars > this.#left) return false
    this.#left -= chars
    return true
  }
}
