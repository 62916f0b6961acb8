import { processCpuMs } from './host/hot-threads.js'

/** Test helpers (not exported by the package). */

/** Whether process `pid` still runs (not gone, not a zombie). */
export function isAlive(pid: number): boolean {
  return processCpuMs(pid) !== undefined
}

/** This process's CPU time in ms. */
export function selfCpuMs(): number {
  const usage = process.cpuUsage()
  return (usage.user + usage.system) / 1000
}

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms))

/**
 * How much CPU (ms) this process and the given children use during `windowMs`, starting after
 * `afterMs`; a child gone by the end of the window counts as 0.
 */
export async function cpuGrowth(
  pids: readonly number[],
  afterMs: number,
  windowMs: number,
): Promise<{ self: number; children: number }> {
  await sleep(afterMs)
  const self0 = selfCpuMs()
  const before = pids.map(processCpuMs)
  await sleep(windowMs)
  const self = selfCpuMs() - self0
  let children = 0
  pids.forEach((pid, i) => {
    const a = before[i]
    const b = processCpuMs(pid)
    if (a !== undefined && b !== undefined) children += b - a
  })
  return { self, children }
}
