/** The built-in demo: a small shop (customers, orders, products) as typed tools, with its policy. */
export { CATEGORIES, createShop, money, ORDER_STATUSES, shopData, STATUS_TRANSITIONS } from './shop.js'
export type { Category, Customer, LineItem, Order, OrderStatus, Product, Refund, Shop, ShopData } from './shop.js'
export { shopTools, type ShopToolsOptions } from './tools.js'
export { installShopPolicy, type ShopPolicyOptions } from './policy.js'
export {
  byteFigures,
  contentBytes,
  contentText,
  nativeComparison,
  subCallsOf,
  type ByteFigures,
  type SubCallRecord,
} from './report.js'
