import type { RuntimeSpec } from './driver.js'
import { atpServer } from './atp.js'
import { nodeChildProcess, nodeWorkerSpinning, nodeWorkerThread } from './hops.js'
import { plainNode } from './node.js'
import { ptcRuntimes } from './ptc.js'
import { sebastianwesselQuickJs } from './sebastianwessel-quickjs.js'
import { utcpCodeMode } from './utcp.js'

export type { Driver, RuntimeSpec } from './driver.js'

/** Every runtime of the comparison, in the order of the table (and of the processes in a round). */
export const RUNTIMES: readonly RuntimeSpec[] = [
  plainNode,
  nodeWorkerThread,
  nodeWorkerSpinning,
  nodeChildProcess,
  ...ptcRuntimes,
  utcpCodeMode,
  atpServer,
  sebastianwesselQuickJs,
]
