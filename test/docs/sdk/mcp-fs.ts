/**
 * `read_text_file` of @modelcontextprotocol/server-filesystem as `ptc serve --upstream "fs=…"` registers it
 * (`fs.read_text_file`, its structured output `{ content }`): packages/mcp/README.md's program block is
 * checked against it.
 */
import type { ToolDefinition } from '@ptc/tools'

export const tools: ToolDefinition[] = [
  {
    name: 'fs.read_text_file',
    description: 'Read the complete contents of a file from the file system as text.',
    parameters: {
      type: 'object',
      properties: { path: { type: 'string' }, tail: { type: 'number' }, head: { type: 'number' } },
      required: ['path'],
      additionalProperties: false,
    },
    output: {
      schema: {
        type: 'object',
        properties: { content: { type: 'string' } },
        required: ['content'],
        additionalProperties: false,
      },
      render: () => [],
    },
    execute: async () => ({ content: '' }),
  },
]
