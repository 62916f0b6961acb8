/**
 * The main job, for now: register typed tools, add policy (approval, a guard,
 * the timeout policy), and run one model batch through the native executor,
 * printing each result and the session log.
 *
 *   npx --yes pnpm@10.34.9 demo
 */
import { defineTool, MemorySession, ToolsService, type Agent, type ToolCallBlock } from '@ptc/tools'
import { installTimeoutPolicy } from '@ptc/tools/timeout'

const products = [
  { sku: 'KB-01', name: 'Mechanical keyboard', price: 89, stock: 12 },
  { sku: 'MS-02', name: 'Wireless mouse', price: 25, stock: 0 },
  { sku: 'MN-27', name: '27-inch monitor', price: 219, stock: 4 },
  { sku: 'HB-07', name: 'USB-C hub', price: 39, stock: 31 },
]

const searchProducts = defineTool({
  name: 'search_products',
  description: 'Find products whose name contains the query.',
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
    render: (args, hits) => [
      { type: 'text', text: `${hits.length} match(es) for "${args.query}": ${hits.map((h) => h.sku).join(', ')}` },
    ],
  },
  isConcurrencySafe: () => true,
  execute: async ({ query, inStockOnly }) =>
    products
      .filter((p) => p.name.toLowerCase().includes(query.toLowerCase()) && (inStockOnly !== true || p.stock > 0))
      .map(({ sku, name, price }) => ({ sku, name, price })),
})

const getStock = defineTool({
  name: 'get_stock',
  description: 'Units in stock for one SKU.',
  parameters: { sku: { type: 'string', required: true } },
  output: {
    schema: {
      type: 'object',
      additionalProperties: false,
      properties: { sku: { type: 'string' }, stock: { type: 'integer' } },
    },
    render: (_args, v) => [{ type: 'text', text: `${v.sku}: ${v.stock} in stock` }],
  },
  isConcurrencySafe: () => true,
  timeoutMs: 1_000,
  execute: async ({ sku }) => {
    const product = products.find((p) => p.sku === sku)
    if (product === undefined) throw new Error(`no product with SKU ${sku}`)
    return { sku, stock: product.stock }
  },
})

const reserve = defineTool({
  name: 'reserve',
  description: 'Reserve units of a product (mutates stock; runs alone).',
  parameters: { sku: { type: 'string', required: true }, quantity: { type: 'integer', required: true } },
  output: {
    schema: {
      type: 'object',
      additionalProperties: false,
      properties: { reservation: { type: 'string' }, remaining: { type: 'integer' } },
    },
    render: (_args, v) => [{ type: 'text', text: `reserved (${v.reservation}); ${v.remaining} left` }],
  },
  execute: async ({ sku, quantity }) => {
    const product = products.find((p) => p.sku === sku)
    if (product === undefined || product.stock < quantity) throw new Error(`cannot reserve ${quantity} of ${sku}`)
    product.stock -= quantity
    return { reservation: `R-${sku}-${quantity}`, remaining: product.stock }
  },
})

const tools = new ToolsService({
  // A real harness asks the user; the demo approves reservations of up to 5 units.
  approval: {
    request: async ({ exec }) =>
      ((exec.arguments as { quantity?: number }).quantity ?? 0) <= 5 ? 'allowed-once' : 'rejected',
  },
})
for (const tool of [searchProducts, getStock, reserve]) tools.register(tool)
installTimeoutPolicy(tools)
tools.on('tools/pre-execute', (exec, next) =>
  exec.name === 'reserve' ? { kind: 'ask', reason: 'reservations change stock' } : next(),
)
tools.guard((exec) =>
  exec.name === 'reserve' && (exec.arguments as { sku?: string }).sku === 'MN-27'
    ? 'monitors are reserved by staff only'
    : undefined,
)

const session = new MemorySession()
const agent: Agent = { id: 'demo-agent', session }

// What a model might send in one step.
const calls: ToolCallBlock[] = [
  { type: 'tool_call', id: 'call_1', name: 'search_products', arguments: '{"query":"usb"}' },
  { type: 'tool_call', id: 'call_2', name: 'get_stock', arguments: '{"sku":"KB-01"}' },
  { type: 'tool_call', id: 'call_3', name: 'get_stock', arguments: '{"sku":42}' },
  { type: 'tool_call', id: 'call_4', name: 'reserve', arguments: '{"sku":"KB-01","quantity":2}' },
  { type: 'tool_call', id: 'call_5', name: 'reserve', arguments: '{"sku":"KB-01","quantity":50}' },
  { type: 'tool_call', id: 'call_6', name: 'reserve', arguments: '{"sku":"MN-27","quantity":1}' },
  { type: 'tool_call', id: 'call_7', name: 'delete_everything', arguments: '{}' },
]

const batch = await tools.execute({ calls, signal: new AbortController().signal, agent, log: { turn: 1, step: 1 } })

console.log('Results, in model order:')
for (const { callId, result } of batch.results) {
  const call = calls.find((c) => c.id === callId)
  const text = result.content.map((b) => (b.type === 'text' ? b.text : `[${b.mimeType}]`)).join(' ')
  const code = result.isError ? ` [${result.error.info?.code ?? 'ERROR'}]` : ''
  console.log(`  ${callId} ${call?.name}${code}: ${text}`)
}
console.log(`\nSession log (${session.events.length} events):`)
for (const event of session.events)
  console.log(
    `  ${event.type} ${String(event.callId)}${event.type === 'tool/result' ? (event.isError === true ? ' error' : ' ok') : ''}`,
  )
