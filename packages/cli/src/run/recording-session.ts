import type { Session, SessionEvent } from '@ptc/tools'
import type { ProgressCounts } from './progress.js'

/**
 * The run's session: keeps every event in memory (for the sub-call report),
 * counts sub-calls as they start and settle (for the progress line) and
 * forwards each event to the durable session file when there is one.
 */
export class RecordingSession implements Session {
  readonly events: SessionEvent[] = []
  #started = 0
  #settled = 0

  constructor(private readonly file: Session | undefined) {}

  /** Sub-calls started and settled so far. */
  get subCalls(): ProgressCounts {
    return { started: this.#started, settled: this.#settled }
  }

  append(event: SessionEvent): void | Promise<void> {
    this.events.push(event)
    if (event.type === 'tool/ptc-dispatch-start') this.#started += 1
    else if (event.type === 'tool/ptc-dispatch') this.#settled += 1
    return this.file?.append(event)
  }
}
