/**
 * No package has an import cycle between its own files (type-only imports included): each file's
 * relative imports form a graph, and no strongly connected component has more than one file.
 */
import { existsSync, readFileSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import { expect, test } from 'vitest'
import { ROOT } from '../../scripts/build-js.js'
import { PACKAGES, sources } from './package-sources.js'

const IMPORT = /\bfrom '(\.{1,2}\/[^']+)'/g

/** Groups of files that import each other, directly or around a loop (Tarjan, iterative). */
function cycles(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  const index = new Map<string, number>()
  const low = new Map<string, number>()
  const onStack = new Set<string>()
  const stack: string[] = []
  const found: string[][] = []
  let next = 0
  for (const start of graph.keys()) {
    if (index.has(start)) continue
    const work: { node: string; edge: number }[] = [{ node: start, edge: 0 }]
    index.set(start, next)
    low.set(start, next++)
    stack.push(start)
    onStack.add(start)
    while (work.length > 0) {
      const frame = work[work.length - 1] as { node: string; edge: number }
      const edges = graph.get(frame.node) ?? []
      if (frame.edge < edges.length) {
        const to = edges[frame.edge++] as string
        if (!index.has(to)) {
          index.set(to, next)
          low.set(to, next++)
          stack.push(to)
          onStack.add(to)
          work.push({ node: to, edge: 0 })
        } else if (onStack.has(to))
          low.set(frame.node, Math.min(low.get(frame.node) as number, index.get(to) as number))
        continue
      }
      work.pop()
      const parent = work[work.length - 1]
      if (parent !== undefined)
        low.set(parent.node, Math.min(low.get(parent.node) as number, low.get(frame.node) as number))
      if (low.get(frame.node) === index.get(frame.node)) {
        const group: string[] = []
        let member: string
        do {
          member = stack.pop() as string
          onStack.delete(member)
          group.push(member)
        } while (member !== frame.node)
        if (group.length > 1) found.push(group.sort())
      }
    }
  }
  return found
}

test.each(PACKAGES.filter((dir) => existsSync(join(ROOT, dir, 'src'))))(
  '%s has no import cycle between its files',
  (dir) => {
    const graph = new Map<string, string[]>()
    for (const file of sources(join(ROOT, dir, 'src'))) {
      const targets: string[] = []
      for (const match of readFileSync(file, 'utf8').matchAll(IMPORT)) {
        const target = resolve(dirname(file), (match[1] as string).replace(/\.js$/, '.ts'))
        if (existsSync(target)) targets.push(target)
      }
      graph.set(file, targets)
    }
    expect(cycles(graph).map((group) => group.map((file) => relative(ROOT, file)))).toEqual([])
  },
)
