/**
 * Every error of `@ptc/adapters`, each with a stable `code`. Match on `code`.
 */

/** Stable codes of `@ptc/adapters` errors. */
export type AdapterErrorCode = 'WIRE_NAME_COLLISION' // two ptc tools would have the same name on a provider's wire

const brand = Symbol.for('@ptc/adapters.error')

/** Base class: a stable `code`, a `name` equal to the class name, `cause` when wrapping. */
export class AdapterError extends Error {
  readonly code: AdapterErrorCode
  constructor(code: AdapterErrorCode, message?: string, options?: ErrorOptions) {
    super(message, options)
    this.code = code
    this.name = new.target.name
  }
  get [brand](): true {
    return true
  }
}

// `instanceof AdapterError` reads the brand, so it works across module copies (a bundled and a source build);
// a subclass uses the ordinary prototype check. Never throws: a value whose traps throw (a hostile or revoked
// Proxy) is not an instance. Installed outside the class body: a bundler renames a class that names itself in
// its body.
Object.defineProperty(AdapterError, Symbol.hasInstance, {
  value(this: unknown, value: unknown): boolean {
    try {
      if (this !== AdapterError) return Function.prototype[Symbol.hasInstance].call(this, value)
      return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[brand] === true
    } catch {
      return false
    }
  },
})

/**
 * Two tools whose names become the same provider name (`fs.read` and `fs_read` are both `fs_read` on the
 * OpenAI and Anthropic wire), or a tool named as a tool the adapter adds (a tool search tool): one of them
 * could never be called. Stable code: `WIRE_NAME_COLLISION`.
 */
export class WireNameCollisionError extends AdapterError {
  declare readonly code: 'WIRE_NAME_COLLISION'
  /** The wire name, and the two names that share it (the added tool's name first when `addedTool` is given). */
  readonly wireName: string
  readonly toolNames: readonly [string, string]
  /** `addedTool`: what adds the tool named `first` (e.g. "Anthropic's tool search tool (toolSearch: 'bm25')"). */
  constructor(wireName: string, first: string, second: string, addedTool?: string) {
    super(
      'WIRE_NAME_COLLISION',
      addedTool === undefined
        ? `tools ${JSON.stringify(first)} and ${JSON.stringify(second)} have the same provider name ` +
            `${JSON.stringify(wireName)} (names on the wire keep only A-Z, a-z, 0-9, _ and -, at most 64 characters): ` +
            'rename one of them'
        : `tool ${JSON.stringify(second)} has the provider name ${JSON.stringify(wireName)}, which ${addedTool} ` +
            'takes: rename the tool',
    )
    this.wireName = wireName
    this.toolNames = Object.freeze([first, second] as const)
  }
}
