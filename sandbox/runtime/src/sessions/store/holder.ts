import { randomBytes } from 'node:crypto'
import { readFileSync, readlinkSync } from 'node:fs'

/**
 * Claim holder ids that say which process holds a claim, so that a process on the same machine can tell a
 * holder that died (killed, crashed) from a live one and take its claims over at once instead of waiting
 * for them to run out: `<name>-<place>-<pid>-<random>`, where the place is this boot of the machine and this
 * process's PID namespace (where a process id names one process; `x` where that cannot be read, e.g. off
 * Linux: such holders are never taken for gone).
 */
const place: string = ((): string => {
  try {
    const boot = readFileSync('/proc/sys/kernel/random/boot_id', 'utf8')
      .replace(/[^0-9a-f]/g, '')
      .slice(0, 16)
    const namespace = /\d+/.exec(readlinkSync('/proc/self/ns/pid'))?.[0]
    return boot.length === 16 && namespace !== undefined ? `${boot}.${namespace}` : 'x'
  } catch {
    return 'x'
  }
})()

const HOLDER = /^[A-Za-z]+-([0-9a-f]{16}\.\d+|x)-(\d+)-[0-9a-f]+$/

/** A new holder id for a claimant in this process (`name`: letters). */
export function claimHolder(name: string): string {
  return `${name}-${place}-${process.pid}-${randomBytes(12).toString('hex')}`
}

/**
 * Whether `holder` (a `claimHolder` id) names a process of this machine and PID namespace that no longer
 * exists, or is a zombie (exited, not reaped). `false` whenever that is not certain: another machine, a
 * foreign id, a live process (or one of another user: `EPERM`), this very process. A reused process id makes
 * a dead holder look alive (its claim then runs out as usual).
 */
export function claimHolderGone(holder: string): boolean {
  const match = HOLDER.exec(holder)
  if (match === null || match[1] === 'x' || match[1] !== place) return false
  const pid = Number(match[2])
  if (!Number.isSafeInteger(pid) || pid <= 0 || pid === process.pid) return false
  try {
    process.kill(pid, 0)
  } catch (error) {
    return (error as { code?: unknown }).code === 'ESRCH'
  }
  // It exists: alive, unless it is a zombie (exited, not yet reaped by its parent: a container without an init may
  // never).
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'latin1')
    return /^[ZX]/.test(stat.slice(stat.lastIndexOf(')') + 2))
  } catch {
    return false
  }
}
