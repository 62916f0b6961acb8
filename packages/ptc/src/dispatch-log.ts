import type { ContentBlock, JsonValue, Session, SessionEvent, ToolExecution, ToolExecutionResult, ToolExecutorHost } from '@ptc/tools'

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
  #tail: Promise<void> = Promise.resolve()
  /** The first append failure, kept for diagnostics; logging never fails the run. */
  failure: unknown = undefined

  constructor(
    private readonly host: ToolExecutorHost,
    private readonly exec: ToolExecution,
    private readonly session: Session | undefined,
  ) {}

  started(call: SubCallIdentity): void {
    if (this.session === undefined) return
    const event: SessionEvent = { type: 'tool/ptc-dispatch-start', time: Date.now(), ...this.#ids(call), arguments: call.arguments }
    this.#chain(() => event)
  }

  /** `settledAt`: when the dispatch settled (commits wait for earlier calls, so the log must not use commit time). */
  settled(call: SubCallIdentity, result: ToolExecutionResult, settledAt: number): void {
    if (this.session === undefined) return
    const time = settledAt
    this.#chain(async () => {
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

  drain(): Promise<void> {
    return this.#tail
  }

  #ids(call: SubCallIdentity): { rootCallId: string; parentCallId: string; subCallId: string; name: string } {
    return { rootCallId: this.exec.rootCallId, parentCallId: this.exec.callId, subCallId: call.subCallId, name: call.name }
  }

  #chain(build: () => SessionEvent | Promise<SessionEvent>): void {
    const session = this.session
    if (session === undefined) return
    this.#tail = this.#tail.then(async () => {
      try {
        await session.append(await build())
      } catch (error) {
        this.failure ??= error
      }
    })
  }
}
