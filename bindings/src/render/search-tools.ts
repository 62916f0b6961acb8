/**
 * The built-in `search_tools` of tool discovery, as programs and the checker see it: past the SDK's size budget a
 * model reads some declarations and finds the rest with it. The PTC executor serves a tool of exactly this shape.
 */
import type { JsonSchemaNode, ObjectJsonSchema } from '@ptc/tools'
import type { BindingTool } from './declarations.js'

const DESCRIPTION =
  'Search the tool catalog. The query is plain words (matched against tool names, descriptions and parameters), ' +
  'an exact tool name, or /regex/ over names. Returns the best matches, each with its name, description and ' +
  'TypeScript declaration; call a match from a program as `await tools[name](args)`.'

const PARAMETERS: ObjectJsonSchema = {
  type: 'object',
  properties: {
    query: {
      type: 'string',
      description: 'What the tool should do, in a few words (e.g. "create an issue"), a tool name, or /regex/',
    },
    limit: { type: 'integer', description: 'How many tools to return, 1 to 50 (default 5)' },
  },
  required: ['query'],
  additionalProperties: false,
}

const OUTPUT: JsonSchemaNode = {
  type: 'object',
  properties: {
    tools: {
      type: 'array',
      items: {
        type: 'object',
        properties: { name: { type: 'string' }, description: { type: 'string' }, declaration: { type: 'string' } },
        required: ['name', 'description', 'declaration'],
        additionalProperties: false,
      },
    },
  },
  required: ['tools'],
  additionalProperties: false,
}

/** `search_tools` as a bound tool: its name, description and schemas, deep-frozen. */
export const searchToolsBinding: BindingTool = deepFreeze({
  name: 'search_tools',
  description: DESCRIPTION,
  parameters: PARAMETERS,
  output: OUTPUT,
})

function deepFreeze<T>(value: T): T {
  const stack: unknown[] = [value]
  for (let node = stack.pop(); node !== undefined; node = stack.pop()) {
    if (typeof node !== 'object' || node === null || Object.isFrozen(node)) continue
    Object.freeze(node)
    stack.push(...Object.values(node))
  }
  return value
}
