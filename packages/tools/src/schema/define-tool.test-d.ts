import { describe, expectTypeOf, test } from 'vitest'
import type { JsonValue } from '../json/types.js'
import type { ContentBlock, ToolDefinition } from '../types/index.js'
import { defineTool } from './define-tool.js'

const text = (t: string) => [{ type: 'text' as const, text: t }]

describe('defineTool', () => {
  test('narrows args in every callback and returns a raw ToolDefinition', () => {
    const tool = defineTool({
      name: 'search',
      description: 'Search.',
      parameters: {
        query: { type: 'string', required: true },
        limit: { type: 'integer' },
        mode: { type: 'string', enum: ['fast', 'full'] },
      },
      output: {
        schema: {
          type: 'array',
          items: {
            type: 'object',
            additionalProperties: false,
            properties: { id: { type: 'string', required: true }, score: { type: 'number' } },
          },
        },
        render: (args, hits) => {
          expectTypeOf(args).toEqualTypeOf<{ query: string; limit?: number; mode?: 'fast' | 'full' }>()
          expectTypeOf(hits).toEqualTypeOf<{ id: string; score?: number }[]>()
          return text(`${hits.length}`)
        },
        presentationMeta: (_args, hits) => hits.length,
      },
      isConcurrencySafe: (args) => {
        expectTypeOf(args.query).toEqualTypeOf<string>()
        return true
      },
      presentCall: (args) => ({ card: 'generic', title: args.query }),
      execute: async ({ query, limit }) => {
        expectTypeOf(query).toEqualTypeOf<string>()
        expectTypeOf(limit).toEqualTypeOf<number | undefined>()
        return [{ id: query, score: 1 }]
      },
    })
    expectTypeOf(tool).toEqualTypeOf<ToolDefinition>()
  })

  test('async arrows returning mapped arrays type-check against the output schema', () => {
    const rows = [{ sku: 'a', name: 'b', price: 1, stock: 2 }]
    defineTool({
      name: 'p',
      description: 'd',
      parameters: { query: { type: 'string', required: true }, inStockOnly: { type: 'boolean' } },
      output: {
        schema: {
          type: 'array',
          items: {
            type: 'object',
            additionalProperties: false,
            properties: { sku: { type: 'string' }, name: { type: 'string' }, price: { type: 'number' } },
          },
        },
        render: (args, hits) => text(`${hits.length} ${args.query} ${hits.map((h) => h.sku).join(',')}`),
      },
      isConcurrencySafe: () => true,
      execute: async ({ query, inStockOnly }) =>
        rows
          .filter((p) => p.name.includes(query) && (inStockOnly !== true || p.stock > 0))
          .map(({ sku, name, price }) => ({ sku, name, price })),
    })
  })

  test('render may be omitted; given, its value parameter is still inferred from the schema', () => {
    const tool = defineTool({
      name: 'stock',
      description: 'd',
      parameters: { sku: { type: 'string', required: true } },
      output: {
        schema: {
          type: 'object',
          additionalProperties: false,
          properties: { count: { type: 'integer', required: true } },
        },
      },
      execute: async () => ({ count: 1 }),
    })
    expectTypeOf(tool).toEqualTypeOf<ToolDefinition>()
    expectTypeOf(tool.output.render).toEqualTypeOf<(args: unknown, value: JsonValue) => ContentBlock[]>()
    defineTool({
      name: 'stock',
      description: 'd',
      parameters: { sku: { type: 'string', required: true } },
      output: {
        schema: {
          type: 'object',
          additionalProperties: false,
          properties: { count: { type: 'integer', required: true } },
        },
        render: (args, value) => {
          expectTypeOf(args).toEqualTypeOf<{ sku: string }>()
          expectTypeOf(value).toEqualTypeOf<{ count: number }>()
          return text(`${value.count}`)
        },
      },
      execute: async () => ({ count: 1 }),
    })
    defineTool({
      name: 'stock',
      description: 'd',
      parameters: {},
      // @ts-expect-error the schema is not optional
      output: { render: () => [] },
      execute: async () => null,
    })
    // @ts-expect-error output is not optional
    defineTool({ name: 'stock', description: 'd', parameters: {}, execute: async () => null })
  })

  test('the raw ToolDefinition keeps render mandatory', () => {
    // @ts-expect-error a raw output declaration needs render
    const output: ToolDefinition['output'] = { schema: { type: 'null' } }
    void output
  })

  test('a wrong return type is a type error', () => {
    defineTool({
      name: 'n',
      description: 'd',
      parameters: {},
      output: {
        schema: {
          type: 'object',
          additionalProperties: false,
          properties: { count: { type: 'integer', required: true } },
        },
        render: () => [],
      },
      // @ts-expect-error count must be a number
      execute: async () => ({ count: 'three' }),
    })
    defineTool({
      name: 'n',
      description: 'd',
      parameters: {},
      output: { schema: { type: 'string', enum: ['ok', 'failed'] }, render: () => [] },
      // @ts-expect-error only the enum's literals are allowed
      execute: async () => 'maybe' as const,
    })
  })

  test('unknown argument keys and wrong argument types are type errors', () => {
    defineTool({
      name: 'n',
      description: 'd',
      parameters: { path: { type: 'string', required: true } },
      output: { schema: { type: 'json' }, render: () => [] },
      execute: async (args) => {
        // @ts-expect-error no such parameter
        void args.nope
        // @ts-expect-error path is a string
        const n: number = args.path
        void n
        const v: JsonValue = { any: ['json'] }
        return v
      },
    })
  })
})
