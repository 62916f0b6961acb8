export { serveCommand, type ServeCommandOptions, type ServeIo } from './serve-command.js'
export {
  parseServeArgs,
  SERVE_USAGE,
  serveUsage,
  TOKEN_ENV,
  type ServeArgs,
  type ServeArgsOptions,
} from './serve-args.js'
export { createPtcMcpServer, type PtcMcpServer, type PtcMcpServerOptions } from './server/ptc-mcp-server.js'
export { listenHttp, type HttpEndpoint, type HttpEndpointStats } from './server/http/endpoint.js'
export { HTTP_DEFAULTS, type HttpServeOptions } from './server/http/options.js'
export { MAX_UPSTREAM_MESSAGE_BYTES } from './upstream/bounded-fetch.js'
export { MAX_STDERR_BACKLOG } from './upstream/stderr.js'
export { MAX_REQUESTS_IN_FLIGHT, MAX_STDOUT_BACKLOG } from './server/stdio-flow.js'
export {
  MAX_UPSTREAM_TOOLS,
  UpstreamConnection,
  type UpstreamSpec,
  type UpstreamUrlSpec,
  type ReconnectOptions,
} from './upstream/connection.js'
export { parseUpstreamCommand, parseUpstreamHeader, splitWords, type UpstreamCommand } from './upstream/command-line.js'
export {
  McpError,
  McpServeUsageError,
  UpstreamToolError,
  UpstreamUnavailableError,
  type McpErrorCode,
} from './errors.js'
export { createMcpApproval, type McpApproval, type McpCaller } from './server/approval.js'
