import type { JsonSchemaNode } from '@ptc/tools'
import { MAX_TEXT_CHARS } from './analyze.js'

/** The indexed fields of a tool, in the order of a posting's packed term counts. */
export const FIELDS = ['name', 'description', 'parameterNames', 'parameterText'] as const
export type FieldName = (typeof FIELDS)[number]

/** Bounds of the walk over a parameter schema: a huge or deep schema costs no more than these. */
const MAX_DEPTH = 3
const MAX_PROPERTIES = 64
const MAX_ENUM_VALUES = 16
const MAX_PARAMETER_DESCRIPTION = 300

export interface DocumentText {
  readonly name: string
  readonly description: string
  /** Property names and string enum values (`method: 'list_workflows' | …` names what a tool does). */
  readonly parameterNames: readonly string[]
  readonly parameterText: readonly string[]
}

/** The text of each field of a tool, from a bounded, iterative walk of its parameter schema. */
export function documentText(key: string, description: string, parameters: JsonSchemaNode): DocumentText {
  const parameterNames: string[] = []
  const parameterText: string[] = []
  let properties = 0
  let textChars = 0
  const stack: Array<{ node: unknown; depth: number }> = [{ node: parameters, depth: 0 }]
  while (stack.length > 0 && properties < MAX_PROPERTIES) {
    const { node, depth } = stack.pop() as { node: unknown; depth: number }
    if (!isObject(node)) continue
    const enums = node['enum']
    if (Array.isArray(enums)) {
      for (const value of enums.slice(0, MAX_ENUM_VALUES)) if (typeof value === 'string') parameterNames.push(value)
    }
    if (depth >= MAX_DEPTH) continue
    for (const branch of [node['items'], ...(Array.isArray(node['oneOf']) ? node['oneOf'] : [])]) {
      if (branch !== undefined) stack.push({ node: branch, depth: depth + 1 })
    }
    const props = node['properties']
    if (!isObject(props)) continue
    for (const name of Object.keys(props)) {
      if (++properties > MAX_PROPERTIES) break
      parameterNames.push(name)
      const child = props[name]
      const text = isObject(child) && typeof child['description'] === 'string' ? child['description'] : ''
      if (text !== '' && textChars < MAX_TEXT_CHARS) {
        const cut = text.slice(0, MAX_PARAMETER_DESCRIPTION)
        textChars += cut.length
        parameterText.push(cut)
      }
      stack.push({ node: child, depth: depth + 1 })
    }
  }
  return { name: key, description, parameterNames, parameterText }
}

function isObject(value: unknown): value is Readonly<Record<string, unknown>> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}
