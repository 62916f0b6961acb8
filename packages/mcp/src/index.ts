export { serveCommand, parseServeArgs, SERVE_USAGE, type ServeIo } from './serve-command.js'
export { createPtcMcpServer, type PtcMcpServer, type PtcMcpServerOptions } from './server/ptc-mcp-server.js'
export { listenHttp, type HttpEndpoint } from './server/http.js'
export { UpstreamConnection, type UpstreamSpec, type ReconnectOptions } from './upstream/connection.js'
export { UpstreamToolError } from './upstream/tool-definition.js'
export { parseUpstreamCommand, splitWords, type UpstreamCommand } from './upstream/command-line.js'
export { McpServeUsageError, UpstreamUnavailableError } from './errors.js'
export {
  convertJsonSchema,
  convertObjectJsonSchema,
  type ConvertedObjectSchema,
  type ConvertedSchema,
  type ConvertOptions,
  type SchemaWarning,
} from '@ptc/tools'
