/**
 * The model-style programs in `programs/`: each file is the body of an async
 * function (what a model sends as `run_code`'s `code`). Its header lines (the
 * lint/type-check opt-out and `// @description …`) are not part of the program.
 */
import { readFileSync } from 'node:fs'

export const SHOP_PROGRAMS = ['top-customers', 'low-stock', 'delayed-orders', 'refund-damaged'] as const
export type ShopProgramName = (typeof SHOP_PROGRAMS)[number]

export interface ShopProgram {
  readonly name: ShopProgramName
  /** `run_code`'s short UI label. */
  readonly description: string
  /** `run_code`'s program text. */
  readonly code: string
}

const HEADER = /^(\/\* eslint-disable .*\*\/|\/\/ @ts-nocheck|\/\/ @description .*)$/

export function loadProgram(name: ShopProgramName): ShopProgram {
  const lines = readFileSync(new URL(`./programs/${name}.ts`, import.meta.url), 'utf8').split('\n')
  let description = name as string
  let start = 0
  while (start < lines.length && HEADER.test(lines[start] ?? '')) {
    const match = /^\/\/ @description (.*)$/.exec(lines[start] ?? '')
    if (match?.[1] !== undefined) description = match[1]
    start++
  }
  while (start < lines.length && (lines[start] ?? '').trim() === '') start++
  return { name, description, code: lines.slice(start).join('\n').trimEnd() }
}
