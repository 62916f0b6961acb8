/** Threads and resident memory of this process and its descendants (Linux `/proc`), for `neighbours.ts`. */
import { readFileSync } from 'node:fs'
import { processTree as tree, treeRssBytes } from '../../test/security/proc.js'

/** Threads of `pid` and its descendants (0 where `/proc` cannot be read). */
export function treeThreads(pid: number = process.pid): number {
  let threads = 0
  for (const p of tree(pid)) {
    try {
      threads += Number(/^Threads:\s+(\d+)$/m.exec(readFileSync(`/proc/${p}/status`, 'utf8'))?.[1] ?? 0)
    } catch {
      // gone while we read
    }
  }
  return threads
}

/** RSS of the process tree in MiB. */
export function treeRssMiB(): number {
  return treeRssBytes() / (1024 * 1024)
}
