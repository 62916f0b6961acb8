import { SessionQueue, type ContentBlock, type JsonValue, type Session, type SessionEvent, type ToolExecution, type ToolExecutionResult, type ToolExecutorHost } from '@ptc/tools'

/** One sub-call's identity, as the log records it. */
export interface SubCallIdentity {
  readonly subCallId: string
  readonly name: string
  readonly arguments: JsonValue
}

/**
 * The durable log of one run's sub-dispatches: `tool/ptc-dispatch-start`
 * when a call starts, `tool/ptc-dispatch` after it settled (its content
 * shaped by the `tools/ptc-dispatch-log` waterfall). Appends are chained in
 * order and never awaited by the program; `drain()` waits for all of them.
 * Without a session nothing is written and the waterfall does not run.
 */
export class DispatchLog {
  /** Undefined without a session: nothing is written and the waterfall does not run. */
  readonly #queue: SessionQueue | undefined

  constructor(
    private readonly host: ToolExecutorHost,
    private readonly exec: ToolExecution,
    session: Session | undefined,
  ) {
    this.#queue = session === undefined ? undefined : new SessionQueue(session)
  }

  started(call: SubCallIdentity): void {
    this.#queue?.append({ type: 'tool/ptc-dispatch-start', time: Date.now(), ...this.#ids(call), arguments: call.arguments })
  }

  /** `settledAt`: when the dispatch settled (commits wait for earlier calls, so the log must not use commit time). */
  settled(call: SubCallIdentity, result: ToolExecutionResult, settledAt: number): void {
    const time = settledAt
    this.#queue?.append(async (): Promise<SessionEvent> => {
      const content: ContentBlock[] = await this.host.ptcDispatchLog({
        exec: this.exec,
        subCallId: call.subCallId,
        name: call.name,
        isError: result.isError,
        content: result.content,
        ...(this.exec.agent !== undefined && { agent: this.exec.agent }),
      })
      return {
        type: 'tool/ptc-dispatch',
        time,
        ...this.#ids(call),
        isError: result.isError,
        content,
        ...(result.error !== undefined && { error: result.error }),
        ...(result.meta !== undefined && { meta: result.meta }),
      }
    })
  }

  /** Every queued event written (a failed append never fails the run: logging is best effort here). */
  async drain(): Promise<void> {
    await this.#queue?.drain()
  }

  #ids(call: SubCallIdentity): { rootCallId: string; parentCallId: string; subCallId: string; name: string } {
    return { rootCallId: this.exec.rootCallId, parentCallId: this.exec.callId, subCallId: call.subCallId, name: call.name }
  }
}
