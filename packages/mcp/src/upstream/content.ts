import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import type { ContentBlock } from '@ptc/tools'

type McpContent = CallToolResult['content'][number]

/**
 * MCP content as ptc content: text and images as they are; audio, resource
 * links and embedded resources as text (an embedded text resource keeps its text).
 */
export function fromMcpContent(blocks: readonly McpContent[] | undefined): ContentBlock[] {
  const out: ContentBlock[] = []
  for (const block of blocks ?? []) {
    switch (block.type) {
      case 'text':
        out.push({ type: 'text', text: block.text })
        break
      case 'image':
        out.push({ type: 'image', mimeType: block.mimeType, data: block.data })
        break
      case 'audio':
        out.push({ type: 'text', text: `[audio ${block.mimeType}, ${block.data.length} base64 chars]` })
        break
      case 'resource_link':
        out.push({ type: 'text', text: `[resource ${block.uri}${block.name === '' ? '' : ` (${block.name})`}]` })
        break
      case 'resource': {
        const resource = block.resource
        out.push({
          type: 'text',
          text:
            'text' in resource
              ? resource.text
              : `[resource ${resource.uri}${resource.mimeType === undefined ? '' : `, ${resource.mimeType}`}]`,
        })
        break
      }
    }
  }
  return out
}

/** The text blocks joined with newlines. */
export function textOf(blocks: readonly ContentBlock[]): string {
  return blocks
    .filter((b) => b.type === 'text')
    .map((b) => b.text)
    .join('\n')
}

/** ptc content as MCP content. */
export function toMcpContent(blocks: readonly ContentBlock[]): McpContent[] {
  return blocks.map(
    (b): McpContent =>
      b.type === 'text' ? { type: 'text', text: b.text } : { type: 'image', mimeType: b.mimeType, data: b.data },
  )
}
