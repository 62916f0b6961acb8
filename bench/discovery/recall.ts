/** Recall of a search function over a task set: the share of tasks whose expected tool is in the top k. */
import type { SearchTask } from './tasks.js'

export interface Recall {
  readonly at1: number
  readonly at5: number
  /** Tasks whose expected tool is not in the top 5, with what came first. */
  readonly misses: readonly { readonly query: string; readonly expected: string; readonly got: readonly string[] }[]
}

export function recall(
  tasks: readonly SearchTask[],
  search: (query: string, limit: number) => readonly string[],
): Recall {
  let at1 = 0
  let at5 = 0
  const misses: { query: string; expected: string; got: string[] }[] = []
  for (const { query, expected } of tasks) {
    const got = search(query, 5).slice(0, 5)
    const hit = got.findIndex((key) => expected.includes(key))
    if (hit === 0) at1++
    if (hit >= 0) at5++
    else misses.push({ query, expected: expected[0], got: [...got] })
  }
  return { at1: at1 / tasks.length, at5: at5 / tasks.length, misses }
}
