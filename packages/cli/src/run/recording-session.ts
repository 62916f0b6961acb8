import type { Session, SessionEvent } from '@ptc/tools'

/**
 * The run's session: keeps every event in memory (for the sub-call report)
 * and forwards it to the durable session file when there is one.
 */
export class RecordingSession implements Session {
  readonly events: SessionEvent[] = []

  constructor(private readonly file: Session | undefined) {}

  append(event: SessionEvent): void | Promise<void> {
    this.events.push(event)
    return this.file?.append(event)
  }
}
