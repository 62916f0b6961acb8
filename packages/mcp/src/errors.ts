/** Bad `ptc serve` usage (exit status 2). Stable code: `MCP_SERVE_USAGE`. */
export class McpServeUsageError extends Error {
  override readonly name = 'McpServeUsageError'
  readonly code = 'MCP_SERVE_USAGE'
}

/** An upstream MCP server is not connected and could not be (re)connected. Stable code: `UPSTREAM_UNAVAILABLE`. */
export class UpstreamUnavailableError extends Error {
  override readonly name = 'UpstreamUnavailableError'
  readonly code = 'UPSTREAM_UNAVAILABLE'
  constructor(
    readonly upstream: string,
    message: string,
    options?: ErrorOptions,
  ) {
    super(message, options)
  }
}
