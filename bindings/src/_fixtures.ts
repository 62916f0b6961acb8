/** Sample tools shared by the tests of this package. Not exported. */
import type { BindingTool } from './render/declarations.js'

export const getStock: BindingTool = {
  name: 'get_stock',
  description: 'Current stock of one product in one warehouse.',
  parameters: {
    type: 'object',
    properties: {
      sku: { type: 'string', description: 'Product SKU, e.g. "A-100".' },
      warehouse: { type: 'string', enum: ['east', 'west'], default: 'east' },
    },
    required: ['sku'],
    additionalProperties: false,
  },
  output: {
    type: 'object',
    properties: {
      sku: { type: 'string' },
      count: { type: 'integer', description: 'Units on hand.' },
      updatedAt: { type: 'string', title: 'Last update', examples: ['2024-01-01T00:00:00Z'] },
    },
    required: ['sku', 'count'],
    additionalProperties: false,
  },
}

export const createIssue: BindingTool = {
  name: 'github.create_issue',
  description: 'Open a GitHub issue.',
  parameters: {
    type: 'object',
    properties: {
      title: { type: 'string' },
      labels: { type: 'array', items: { type: 'string' } },
      assignee: { oneOf: [{ type: 'string' }, { type: 'null' }] },
    },
    required: ['title'],
  },
  output: {
    type: 'object',
    properties: { number: { type: 'integer' }, url: { type: 'string' } },
    required: ['number'],
  },
}

export const listAll: BindingTool = {
  name: 'list_all',
  description: 'Everything, paged.',
  parameters: { type: 'object', properties: { page: { type: 'integer' } }, additionalProperties: false },
  output: {
    type: 'array',
    items: { type: 'object', properties: { id: { type: 'string' } }, required: ['id'], additionalProperties: false },
  },
}

export const protoTool: BindingTool = {
  name: '__proto__',
  description: 'An ordinary name.',
  parameters: { type: 'object' },
  output: { type: 'string' },
}

export const sampleTools: readonly BindingTool[] = [getStock, createIssue, listAll, protoTool]
