/**
 * Every error of `@ptc/mcp`, each with a stable `code`. Match on `code`.
 */

/** Stable codes of `@ptc/mcp` errors. */
export type McpErrorCode =
  | 'MCP_SERVE_USAGE' // bad `ptc serve` arguments or HTTP options
  | 'UPSTREAM_UNAVAILABLE' // an upstream MCP server is closed, or could not be (re)connected
  | 'UPSTREAM_TOOL_ERROR' // an upstream tool reported a failure (`isError: true`) or broke its output schema

const brand = Symbol.for('@ptc/mcp.error')

/** Base class: a stable `code`, a `name` equal to the class name, `cause` when wrapping. */
export class McpError extends Error {
  readonly code: McpErrorCode
  constructor(code: McpErrorCode, message?: string, options?: ErrorOptions) {
    super(message, options)
    this.code = code
    this.name = new.target.name
  }
  get [brand](): true {
    return true
  }
}

// `instanceof McpError` reads the brand, so it works across module copies (a bundled and a source build); a
// subclass uses the ordinary prototype check. Never throws: a value whose traps throw (a hostile or revoked
// Proxy) is not an instance. Installed outside the class body: a bundler renames a class that names itself
// in its body, and every error's `name` became `_McpError`.
Object.defineProperty(McpError, Symbol.hasInstance, {
  value(this: unknown, value: unknown): boolean {
    try {
      if (this !== McpError) return Function.prototype[Symbol.hasInstance].call(this, value)
      return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[brand] === true
    } catch {
      return false
    }
  },
})

/** Bad `ptc serve` usage (exit status 2). Stable code: `MCP_SERVE_USAGE`. */
export class McpServeUsageError extends McpError {
  declare readonly code: 'MCP_SERVE_USAGE'
  constructor(message?: string, options?: ErrorOptions) {
    super('MCP_SERVE_USAGE', message, options)
  }
}

/**
 * A count or size given as an option: `undefined` (its default), or a positive integer of at most `max`; returns
 * it. @throws McpServeUsageError naming the option otherwise
 */
export function checkBound<T extends number | undefined>(name: string, value: T, max = Number.MAX_SAFE_INTEGER): T {
  if (value === undefined || (Number.isSafeInteger(value) && value >= 1 && value <= max)) return value
  throw new McpServeUsageError(
    `${name} must be a positive integer${max < Number.MAX_SAFE_INTEGER ? ` of at most ${max}` : ''}, not ` +
      `${String(value)}`,
  )
}

/** An upstream MCP server is not connected and could not be (re)connected. Stable code: `UPSTREAM_UNAVAILABLE`. */
export class UpstreamUnavailableError extends McpError {
  declare readonly code: 'UPSTREAM_UNAVAILABLE'
  /** The upstream's label. */
  readonly upstream: string
  constructor(upstream: string, message: string, options?: ErrorOptions) {
    super('UPSTREAM_UNAVAILABLE', message, options)
    this.upstream = upstream
  }
}

/** A failure the upstream tool itself reported (`isError: true`). Stable code: `UPSTREAM_TOOL_ERROR`. */
export class UpstreamToolError extends McpError {
  declare readonly code: 'UPSTREAM_TOOL_ERROR'
  constructor(message?: string, options?: ErrorOptions) {
    super('UPSTREAM_TOOL_ERROR', message, options)
  }
}
