import type { SessionMemory } from '../engine/session-memory.js'
import type { RunInput } from '../engine/protocol.js'
import type { RunHost } from './run-host.js'

/** Where runs' engines live: on the calling thread (`InlineEngines`) or in a pool of worker threads (`WorkerPool`). */
export interface Engines {
  /**
   * Starts `input` for `host` (possibly after waiting for an engine). The host's result settles the
   * run; a host that ended meanwhile (deadline, abort) is dropped without starting.
   */
  execute(host: RunHost, input: RunInput): void
  /**
   * Makes engines ready before the first run asks for one (boots the workers, or loads and boots a
   * module inline) so that run does not wait for them. A failure is left for a run to meet and report.
   */
  warm(): void
  /**
   * A session memory the host let go of (replaced by its run's next capture, expired, evicted, saved):
   * engines whose captures arrive as transferred buffers may send the buffer back for a later capture.
   */
  recycle?(memory: SessionMemory): void
  /** Stops accepting work and releases threads and modules; live runs were already stopped. */
  dispose(): Promise<void>
}
