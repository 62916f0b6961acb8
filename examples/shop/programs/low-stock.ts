/* eslint-disable @typescript-eslint/ban-ts-comment -- a run_code program body (top-level await and return), not a module; test/e2e/shop.test.ts type-checks it against the SDK */
// @ts-nocheck
// @description Products at or below their reorder level, per category

const categories = ['keyboards', 'mice', 'monitors', 'audio', 'cables'] as const
const perCategory = await Promise.all(categories.map((category) => tools.search_products({ category })))

const report: Record<string, { sku: string; name: string; stock: number; reorderLevel: number }[]> = {}
let count = 0
categories.forEach((category, i) => {
  const low = (perCategory[i] ?? [])
    .filter((p) => p.stock <= p.reorderLevel)
    .sort((a, b) => a.stock - b.stock || a.sku.localeCompare(b.sku))
    .map(({ sku, name, stock, reorderLevel }) => ({ sku, name, stock, reorderLevel }))
  report[category] = low
  count += low.length
})
const outOfStock = Object.values(report).flat().filter((p) => p.stock === 0).map((p) => p.sku)
console.log(`${count} product(s) at or below their reorder level; out of stock: ${outOfStock.join(', ') || 'none'}`)
return report
