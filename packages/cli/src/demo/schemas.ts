/** The value schemas of the shop's records, as its tools declare their parameters and results. */
import type { InferValue, ValueSchemaSpec } from '@ptc/tools'
import { CATEGORIES, ORDER_STATUSES, type Order } from './shop.js'

export const str = { type: 'string', required: true } as const
export const int = { type: 'integer', required: true } as const

export const customerSpec = {
  type: 'object',
  additionalProperties: false,
  properties: {
    id: str,
    name: str,
    email: str,
    city: str,
    country: { ...str, description: 'ISO 3166 alpha-2' },
    tier: { type: 'string', enum: ['standard', 'silver', 'gold'], required: true },
    joinedAt: { ...str, description: 'ISO date' },
  },
} as const satisfies ValueSchemaSpec

export const productSpec = {
  type: 'object',
  additionalProperties: false,
  properties: {
    sku: str,
    name: str,
    category: { type: 'string', enum: CATEGORIES, required: true },
    priceCents: { ...int, description: 'unit price in euro cents' },
    stock: { ...int, description: 'units on hand' },
    reorderLevel: { ...int, description: 'restock when stock is at or below this' },
  },
} as const satisfies ValueSchemaSpec

export const statusSpec = { type: 'string', enum: ORDER_STATUSES, required: true } as const

export const orderSummarySpec = {
  type: 'object',
  additionalProperties: false,
  properties: {
    id: str,
    customerId: str,
    placedAt: { ...str, description: 'ISO date-time' },
    status: statusSpec,
    totalCents: int,
    itemCount: { ...int, description: 'number of line items' },
    expectedDeliveryAt: { ...str, description: 'ISO date' },
  },
} as const satisfies ValueSchemaSpec

export const orderSpec = {
  type: 'object',
  additionalProperties: false,
  properties: {
    ...orderSummarySpec.properties,
    shippedAt: { type: 'string', description: 'ISO date; absent until shipped' },
    deliveredAt: { type: 'string', description: 'ISO date; absent until delivered' },
    refundedCents: { ...int, description: 'refunded so far' },
    items: {
      type: 'array',
      required: true,
      items: {
        type: 'object',
        additionalProperties: false,
        properties: { sku: str, name: str, quantity: int, unitPriceCents: int, lineTotalCents: int },
      },
    },
  },
} as const satisfies ValueSchemaSpec

type OrderSummary = InferValue<typeof orderSummarySpec>

export function summary(order: Order): OrderSummary {
  const { id, customerId, placedAt, status, totalCents, expectedDeliveryAt } = order
  return { id, customerId, placedAt, status, totalCents, itemCount: order.items.length, expectedDeliveryAt }
}
