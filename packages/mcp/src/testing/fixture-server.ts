/**
 * A small upstream MCP server for tests, with raw JSON Schemas outside the
 * enforced subset. Run as a process (stdio), it writes its pid to the file
 * named by `--pid-file`, and `<pid-file>.sleeping` when a `sleep` call starts,
 * so a test can kill it mid-call:
 *   node --conditions=@ptc/source --import tsx packages/mcp/src/testing/fixture-server.ts --pid-file /tmp/x.pid
 */
import { renameSync, writeFileSync } from 'node:fs'
import { pathToFileURL } from 'node:url'
import { Server } from '@modelcontextprotocol/sdk/server/index.js'
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js'
import {
  CallToolRequestSchema,
  ListToolsRequestSchema,
  type CallToolResult,
  type Tool,
} from '@modelcontextprotocol/sdk/types.js'

export const FIXTURE_TOOLS: Tool[] = [
  {
    name: 'sleep',
    description: 'Wait, then answer "slept <ms>".',
    inputSchema: {
      type: 'object',
      properties: { ms: { type: 'integer', minimum: 0, maximum: 60_000 } },
      required: ['ms'],
    },
    annotations: { readOnlyHint: true },
  },
  {
    name: 'echo',
    description: 'Echo a text.',
    inputSchema: {
      type: 'object',
      properties: { text: { type: 'string', minLength: 1, pattern: '^\\S' } },
      required: ['text'],
      additionalProperties: false,
    },
    annotations: { readOnlyHint: true },
  },
  {
    name: 'add',
    description: 'Add two numbers (structured output).',
    inputSchema: {
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      type: 'object',
      properties: { a: { $ref: '#/$defs/num' }, b: { $ref: '#/$defs/num' } },
      required: ['a', 'b'],
      $defs: { num: { type: 'number', description: 'a number' } },
    },
    outputSchema: { type: 'object', properties: { sum: { type: 'number', minimum: -1e9 } }, required: ['sum'] },
    annotations: { readOnlyHint: true },
  },
  {
    name: 'pixel',
    description: 'A 1x1 PNG and a caption.',
    inputSchema: { type: 'object' },
  },
  {
    name: 'fails',
    description: 'Always reports an error.',
    inputSchema: { type: 'object', properties: { why: { type: ['string', 'null'] } } },
  },
]

/** A tool whose input schema cannot become an object schema: skipped with a warning. */
export const UNUSABLE_TOOL: Tool = {
  name: 'scalar',
  description: 'Input is a string.',
  inputSchema: { type: 'object', allOf: [{ type: 'string' }, { type: 'string' }] } as Tool['inputSchema'],
}

const PIXEL = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII='

/** Options of the fixture server. */
export interface FixtureServerOptions {
  /** Runs when a `sleep` call starts. */
  onSleep?: () => void
  /**
   * Tools listed after the fixture's own; read at every `tools/list` (a test may change it, then
   * `sendToolListChanged()`).
   */
  extraTools?: Tool[] | (() => Tool[])
  /**
   * Answers `tools/list` instead of the fixture's list (an upstream that pages its list, or misbehaves doing it);
   * a call of a name not among the fixture's own then answers `called <name>`.
   */
  listPage?: (cursor: string | undefined) => Promise<{ tools: Tool[]; nextCursor?: string }>
  /** Answers a call of a name not among the fixture's own tools, when it returns a result. */
  answer?: (name: string, args: Record<string, unknown>) => CallToolResult | undefined
}

/**
 * The fixture server (not connected). It announces `tools.listChanged`; a tool it does not know answers
 * `called <name>`.
 */
export function createFixtureServer(options: FixtureServerOptions = {}): Server {
  const server = new Server(
    { name: 'ptc fixture', version: '1.0.0' },
    { capabilities: { tools: { listChanged: true } } },
  )
  const extraTools = (): Tool[] =>
    typeof options.extraTools === 'function' ? options.extraTools() : (options.extraTools ?? [])
  const { listPage } = options
  server.setRequestHandler(ListToolsRequestSchema, (request) =>
    listPage === undefined ? { tools: [...FIXTURE_TOOLS, ...extraTools()] } : listPage(request.params?.cursor),
  )
  server.setRequestHandler(CallToolRequestSchema, async (request, extra): Promise<CallToolResult> => {
    const args = (request.params.arguments ?? {}) as Record<string, unknown>
    switch (request.params.name) {
      case 'sleep': {
        options.onSleep?.()
        const ms = Number(args['ms'])
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, ms)
          extra.signal.addEventListener('abort', () => (clearTimeout(timer), resolve()), { once: true })
        })
        return { content: [{ type: 'text', text: `slept ${ms}` }] }
      }
      case 'echo':
        return { content: [{ type: 'text', text: String(args['text']) }] }
      case 'add': {
        const sum = Number(args['a']) + Number(args['b'])
        return { content: [{ type: 'text', text: JSON.stringify({ sum }) }], structuredContent: { sum } }
      }
      case 'pixel':
        return {
          content: [
            { type: 'text', text: 'a pixel' },
            { type: 'image', mimeType: 'image/png', data: PIXEL },
          ],
        }
      case 'fails':
        return { content: [{ type: 'text', text: `it failed: ${String(args['why'] ?? 'no reason')}` }], isError: true }
      default: {
        const answered = options.answer?.(request.params.name, args)
        if (answered !== undefined) return answered
        // With `listPage`, the fixture cannot tell which names it listed: every other name answers.
        return listPage !== undefined || extraTools().some((t) => t.name === request.params.name)
          ? { content: [{ type: 'text', text: `called ${request.params.name}` }] }
          : { content: [{ type: 'text', text: `unknown tool ${request.params.name}` }], isError: true }
      }
    }
  })
  return server
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const at = process.argv.indexOf('--pid-file')
  const pidFile = at >= 0 ? process.argv[at + 1] : undefined
  // Written whole or not at all (a temporary file renamed): a test that sees the file reads a pid, never ''.
  const writePid = (file: string): void => {
    writeFileSync(`${file}.${process.pid}.tmp`, String(process.pid))
    renameSync(`${file}.${process.pid}.tmp`, file)
  }
  if (pidFile !== undefined) writePid(pidFile)
  const server = createFixtureServer(pidFile === undefined ? {} : { onSleep: () => writePid(`${pidFile}.sleeping`) })
  await server.connect(new StdioServerTransport())
}
