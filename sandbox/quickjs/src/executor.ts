import type { SessionInput } from './engine/protocol.js'
import type { RunHost } from './host/run-host.js'

/** Where sessions run: on the calling thread or in a pool of workers. */
export interface Executor {
  /** Starts `input` for `host` (possibly after queueing); the host's result settles the run. */
  execute(host: RunHost, input: SessionInput): void
  /** Stops accepting work and releases threads and modules; live runs were already stopped. */
  dispose(): Promise<void>
}
