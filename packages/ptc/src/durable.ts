/**
 * Durable approval (`PtcExecutorOptions.durable`): a `run_code` sub-call whose approval the approval
 * service defers (`deferred`) parks; once the program waits on nothing else, the run suspends (QuickJS:
 * its engine memory and counters, sealed by the runtime), its state goes to the store under a fresh
 * token, and `run_code` returns `awaiting: { token, calls }`. `ToolsService.resume({ token, decision })`
 * — here or in another process with the same store and runtime secret — opens the state, dispatches
 * the parked calls again with the decision, and lets the program go on where it waited.
 */
import { randomUUID } from 'node:crypto'
import { MAX_TIMER_MS, SandboxUsageError, type CodeRunResult, type CodeRuntime, type JsonValue } from '@ptc/sandbox'
import {
  claimHolder,
  claimHolderGone,
  SessionStoreError,
  STORE_WAIT_MS,
  waitForStore,
  type DurableRun,
  type ResumeRunRequest,
  type SessionStore,
  type SuspendedRun,
} from '@ptc/sandbox/session'
import type {
  ApprovalDecision,
  DisplayReason,
  ToolBatchResult,
  ToolExecutionResult,
  ToolExecutionToken,
  ToolExecutorServices,
  ToolResumeInput,
  ToolRunContext,
  UserMessage,
} from '@ptc/tools'
import { failureResult, sessionLogFailed, type LogFailure } from '@ptc/tools/executor'
import { RUN_CODE, textHead } from '@ptc/tools'
import { answered } from './answered.js'
import { buildBindings } from './bindings.js'
import { DispatchLog } from './dispatch-log.js'
import type { LogLimits } from './log-limits.js'
import { CodeRunFailedError, ResumeError } from './errors.js'
import { SubCallScheduler, type SubCallNumbering } from './scheduler.js'

/** Options of durable approval. */
export interface DurableOptions {
  /** Where suspended programs wait (a file store, or Redis shared by replicas): `@ptc/sandbox/session`. */
  store: SessionStore
  /** How long a suspended program waits for its decision before its state expires (default 7 days). */
  ttlMs?: number
  /**
   * How long storing a suspended program's state, and taking it back in `resume`, may wait for the store
   * (default `STORE_WAIT_MS`, 10 s): a store that does not answer by then loses nothing it confirmed, and
   * the call ends (the program's state is lost: it could not be stored) or the resume is refused
   * (`STORE_UNAVAILABLE`: the state stays, or is put back when the store answers late).
   */
  storeWaitMs?: number
}

/** What a suspended program's `run_code` value carries: its token and the calls waiting for approval. */
export interface AwaitingApproval {
  token: string
  /** `reason` and `displayReason`: the ask decision's (`displayReason` localized, for a person). */
  calls: { tool: string; arguments: JsonValue; reason?: string; displayReason?: DisplayReason }[]
}

/** What a durable run's state carries besides the engine's: the call it belongs to. */
interface RunIdentity {
  callId: string
  rootCallId: string
  /** Sub-call ids used so far. */
  subCalls: number
  /** The id of the agent the program ran for (null: none): only that agent may resume it. */
  agent: string | null
  /** The `run_code` call's arguments (absent in states suspended before they were kept: `{}`), for the listeners of its resumed result. */
  arguments?: JsonValue
  /**
   * When the stored state expires (ms since the epoch; absent in states stored before it was kept): a refused
   * resume puts the state back until then, not for a new TTL.
   */
  expiresAt?: number
}

/** The transport's side of one run: its scheduler, log and limits. */
export interface DurableRunConfig {
  readonly runtime: CodeRuntime
  /** The longest wall a run may have (a resumed run's own is sealed in its state): bounds the wait for `resumeRun`. */
  readonly maxWallMs: number
  readonly maxParallelSubCalls: number
  readonly maxForwardedChars: number
  readonly drainGraceMs: number
  readonly logLimits: LogLimits | undefined
}

const DEFAULT_TTL_MS = 7 * 24 * 3_600_000
/** The claim of a token's resume is kept under the token with this after it (claims and entries do not meet). */
const LEASE_SUFFIX = ':resume'
/** Past a resumed run's longest wall and a store wait: a claim of a process that hangs runs out after that. */
const LEASE_MARGIN_MS = 30_000
const SWEEP_EVERY_MS = 10 * 60_000

/** This process's claim of a token's resume. */
interface Lease {
  readonly key: string
  readonly holder: string
  /** When the claim was asked for (`performance.now()`) and for how long (ms): it holds until at least then. */
  since: number
  readonly ttlMs: number
}

export class DurableRuns {
  readonly #store: SessionStore
  readonly #runtime: CodeRuntime
  readonly #ttlMs: number
  readonly #storeWaitMs: number
  /** The runs suspended by the calls of this process, by result: their awaiting value or why none. */
  readonly #awaiting = new WeakMap<CodeRunResult, AwaitingApproval | Error>()
  /** Tokens being resumed in this process (the store drops a token once its state is opened). */
  readonly #resuming = new Set<string>()
  /** When the store was last swept of expired states (`SessionStore.sweep`, at most every `SWEEP_EVERY_MS`). */
  #sweptAt = 0

  constructor(options: DurableOptions, runtime: CodeRuntime) {
    if (typeof options !== 'object' || options === null || typeof options.store?.get !== 'function') {
      throw new TypeError('durable needs { store }: a SessionStore such as createFileSessionStore(dir)')
    }
    if (typeof runtime.openRun !== 'function' || typeof runtime.resumeRun !== 'function') {
      throw new TypeError(
        `createPtcExecutor: durable approval needs a runtime that suspends runs (QuickJS); the ${runtime.name} runtime does not`,
      )
    }
    const ttlMs = options.ttlMs ?? DEFAULT_TTL_MS
    if (!(ttlMs > 0) || !Number.isFinite(ttlMs))
      throw new TypeError('durable.ttlMs must be a positive number of milliseconds')
    const storeWaitMs = options.storeWaitMs ?? STORE_WAIT_MS
    if (!(storeWaitMs > 0) || !Number.isFinite(storeWaitMs))
      throw new TypeError('durable.storeWaitMs must be a positive number of milliseconds')
    this.#store = options.store
    this.#runtime = runtime
    this.#ttlMs = ttlMs
    this.#storeWaitMs = storeWaitMs
  }

  /**
   * The `durable` of a run for `ctx`'s call: a fresh token its suspension is stored (and sealed) under,
   * with the call's ids and how many sub-call ids it used (a resumed program numbers on from there).
   */
  begin(
    ctx: Pick<ToolRunContext, 'callId' | 'rootCallId' | 'agent' | 'arguments'>,
    numbering: SubCallNumbering,
  ): DurableRun {
    const agent = ctx.agent?.id ?? null
    return {
      key: `ptc-run-${randomUUID()}`,
      // Sealed as the run suspends, just before the store is given the state for ttlMs.
      data: () =>
        ({
          callId: ctx.callId,
          rootCallId: ctx.rootCallId,
          subCalls: numbering.count,
          agent,
          arguments: ctx.arguments,
          expiresAt: Date.now() + this.#ttlMs,
        }) satisfies RunIdentity,
      // A program in a sandbox session holds it as long as its state may be resumed.
      holdMs: this.#ttlMs,
    }
  }

  /**
   * A run ended: when it suspended, its state goes to the store and the log records the suspension
   * (`awaitingOf` then gives the value `run_code` returns). Never throws: a store failure is kept for
   * `awaitingOf`, which the result reports. Resolves the log's drain once it recorded the suspension (the
   * first event the session did not take, if any); undefined when the run did not suspend.
   */
  async suspended(run: CodeRunResult, key: string, log: DispatchLog): Promise<LogFailure | undefined> {
    const suspended = run.suspended
    if (suspended === undefined) return undefined
    const calls = suspended.parked.map((call) => {
      const detail = call.detail as { subCallId?: string; reason?: string; displayReason?: DisplayReason } | undefined
      const displayReason = detail?.displayReason
      return {
        tool: call.name,
        arguments: call.args,
        ...(typeof detail?.reason === 'string' && { reason: detail.reason }),
        ...(typeof displayReason === 'object' &&
          displayReason !== null &&
          typeof displayReason.en === 'string' && { displayReason }),
        ...(typeof detail?.subCallId === 'string' && { subCallId: detail.subCallId }),
      }
    })
    try {
      const stored = await this.#bounded(this.#store.set(key, suspended.state, { ttlMs: this.#ttlMs }))
      if (!stored.ok) throw new Error(`the store did not answer within ${this.#storeWaitMs} ms`)
    } catch (error) {
      this.#awaiting.set(run, error instanceof Error ? error : new Error(String(error)))
      // Nobody can resume it: the sandbox session it held (if any) goes on from its state before the program.
      await this.#drop(key, suspended.state)
      return undefined
    }
    // States nobody resumed expire; a store that does not drop them itself is swept now and then (best effort).
    if (this.#store.sweep !== undefined && Date.now() - this.#sweptAt >= SWEEP_EVERY_MS) {
      this.#sweptAt = Date.now()
      void this.#store.sweep().catch(() => undefined)
    }
    log.suspended(
      key,
      calls.map(({ tool, arguments: args, reason, displayReason, subCallId }) => ({
        name: tool,
        arguments: args,
        ...(reason !== undefined && { reason }),
        ...(displayReason !== undefined && { displayReason }),
        ...(subCallId !== undefined && { subCallId }),
      })),
    )
    const logFailure = await log.drain()
    this.#awaiting.set(run, {
      token: key,
      calls: calls.map(({ tool, arguments: args, reason, displayReason }) => ({
        tool,
        arguments: args,
        ...(reason !== undefined && { reason }),
        ...(displayReason !== undefined && { displayReason }),
      })),
    })
    return logFailure
  }

  /** The value of a suspended run (`suspended` stored it), or the failure that lost it. */
  awaitingOf(run: CodeRunResult, logs: string[] = run.logs): JsonValue | undefined {
    if (run.suspended === undefined) return undefined
    const awaiting = this.#awaiting.get(run)
    if (awaiting === undefined || awaiting instanceof Error) {
      // The store's message reaches the model: a store may put anything in it.
      const why = awaiting === undefined ? 'it was not stored' : cut(awaiting.message, 300)
      throw new CodeRunFailedError(
        'abort',
        `the program suspended awaiting approval, but its state could not be stored (${why}); it is lost`,
        logs,
      )
    }
    // A program in a sandbox session: the model learns that the session waits for it.
    const notice = run.session?.note
    return { logs, awaiting: awaiting as unknown as JsonValue, ...(notice !== undefined && { session: notice }) }
  }

  /** `ToolsService.resume`: see the module's comment. */
  async resume(
    input: ToolResumeInput,
    services: ToolExecutorServices,
    config: DurableRunConfig,
    content: (value: JsonValue) => ToolExecutionResult['content'],
  ): Promise<ToolBatchResult> {
    const { token } = input
    if (this.#resuming.has(token))
      throw new ResumeError('IN_PROGRESS', `the program of token ${token} is being resumed already`)
    this.#resuming.add(token)
    let lease: Lease | undefined
    /** A delete of the leased state the store did not confirm in time, and what to do once it settles (see below). */
    let late: { deleting: Promise<unknown>; restore: () => Promise<void> } | undefined
    try {
      // Which resumer goes on with a state, across processes too:
      // - a store with claims (file, Redis): this one claims the token, reads the state, and deletes it only
      //   once the program goes on (its first call, or its end). A resumer that dies before leaves the state
      //   where it was: its claim is taken over as soon as its process is known gone (else when it runs out).
      // - a store that can take: the state is taken at once (and put back if this resume is refused);
      // - else it is read, and deleted once the checks passed.
      const store = this.#store
      const unavailable = (what: string): ResumeError =>
        new ResumeError(
          'STORE_UNAVAILABLE',
          `the store did not answer within ${this.#storeWaitMs} ms ${what} token ${token}; try again later`,
        )
      // A store's throw, at once or later, is no raw error of the resume: a token it cannot take as a key is
      // no token of it, any other failure a store that could not answer.
      const storeFailure = (error: unknown, what: string): ResumeError => {
        const why = error instanceof Error ? error.message : String(error)
        if (error instanceof SessionStoreError && error.code === 'invalid-key') {
          return new ResumeError(
            'UNKNOWN_TOKEN',
            `no suspended program has token ${shownToken(token)}: it cannot be one (${why})`,
            { cause: error },
          )
        }
        if (error instanceof SessionStoreError && error.code === 'corrupt-entry') {
          return new ResumeError('STATE_REFUSED', `the state of token ${shownToken(token)} cannot be read: ${why}`, {
            cause: error,
          })
        }
        return new ResumeError(
          'STORE_UNAVAILABLE',
          `the store failed ${what} token ${shownToken(token)}: ${why}; try again later`,
          { cause: error },
        )
      }
      if (store.claim !== undefined && store.release !== undefined)
        lease = await this.#lease(token, config, input.signal, storeFailure, unavailable)
      const taking = lease === undefined && store.take !== undefined
      // Aborted: nothing is taken (a take given up on would hold the state away until it is put back).
      if (input.signal.aborted) throw input.signal.reason
      const reading = Promise.resolve().then(() =>
        taking ? (store.take as NonNullable<SessionStore['take']>)(token) : store.get(token),
      )
      let read: { ok: true; value: Uint8Array | undefined } | { ok: false; reason: 'wall' | 'abort' }
      try {
        read = await this.#bounded(reading, input.signal)
      } catch (error) {
        throw storeFailure(error, 'to give the state of')
      }
      if (!read.ok) {
        // A take that answers after all hands the state back, for the next resume.
        if (taking)
          void reading
            .then((late) => (late === undefined ? undefined : store.set(token, late, { ttlMs: this.#ttlMs })))
            .catch(() => undefined)
        if (read.reason === 'abort') throw input.signal.reason
        throw unavailable('for the state of')
      }
      const bytes = read.value
      if (bytes === undefined)
        throw new ResumeError(
          'UNKNOWN_TOKEN',
          `no suspended program has token ${JSON.stringify(token)}: unknown, expired or already resumed`,
        )
      // A taken state goes back, until it would have expired (a state that says when); an expired one does not.
      // A leased one never left.
      const writeBack = async (expiresAt: unknown): Promise<void> => {
        const ttlMs = typeof expiresAt === 'number' && Number.isFinite(expiresAt) ? expiresAt - Date.now() : this.#ttlMs
        if (ttlMs > 0) await store.set(token, bytes, { ttlMs })
      }
      const putBack = async (expiresAt: unknown): Promise<void> => {
        if (taking) await this.#bounded(writeBack(expiresAt))
      }
      const refuse = async (error: ResumeError, expiresAt?: unknown): Promise<never> => {
        if (taking) await putBack(expiresAt)
        throw error
      }
      let run: SuspendedRun
      try {
        run = await (config.runtime.openRun as NonNullable<CodeRuntime['openRun']>)(token, bytes)
      } catch (error) {
        return await refuse(
          new ResumeError(
            'STATE_REFUSED',
            `the state of token ${token} was refused (it stays stored): ${error instanceof Error ? error.message : String(error)}`,
            { cause: error },
          ),
        )
      }
      const identity = run.data as Partial<RunIdentity> | undefined
      const expiresAt = identity?.expiresAt
      let decisions: ApprovalDecision[]
      try {
        decisions = decisionsFor(input.decision, run.parked.length)
      } catch (error) {
        return await refuse(error as ResumeError, expiresAt)
      }
      if (
        typeof identity?.callId !== 'string' ||
        typeof identity.rootCallId !== 'string' ||
        !Number.isSafeInteger(identity.subCalls)
      ) {
        return await refuse(
          new ResumeError('STATE_REFUSED', `the state of token ${token} does not name the run_code call it belongs to`),
          expiresAt,
        )
      }
      const agent = input.agent?.id ?? null
      if (agent !== (identity.agent ?? null)) {
        return await refuse(
          new ResumeError(
            'WRONG_AGENT',
            `the program of token ${token} ran for ${identity.agent === null || identity.agent === undefined ? 'no agent' : `agent ${JSON.stringify(identity.agent)}`}; only it may resume it, not ${agent === null ? 'a call without an agent' : `agent ${JSON.stringify(agent)}`}`,
          ),
          expiresAt,
        )
      }
      // Taken: another resume of this token finds nothing. Unconfirmed, the program does not go on (it
      // could then run twice).
      if (!taking && lease === undefined && !(await this.#bounded(store.delete(token))).ok)
        throw unavailable('to remove the state of')
      // Leased: the state is deleted as the program goes on, which waits for that (see `#run`). A delete the store
      // did not confirm in time stops the program, and may still happen later (a Redis command is sent when the
      // server is back): the state is then written back before the lease ends, as the resume answered that it stays.
      const consume =
        lease === undefined
          ? undefined
          : async (stops: boolean): Promise<boolean> => {
              const deleting = Promise.resolve().then(() => store.delete(token))
              const done = await this.#bounded(deleting).catch(() => undefined)
              if (done?.ok === false && stops) late = { deleting, restore: () => writeBack(expiresAt) }
              return done?.ok === true
            }
      // A runtime that refuses to resume at all (disposed: a harness shutting down) ran nothing: the state goes back
      // (taken or deleted above, whatever the store).
      return await this.#run(
        run,
        identity as RunIdentity,
        decisions,
        input,
        services,
        config,
        content,
        () => putBack(expiresAt).catch(() => undefined),
        consume,
      )
    } finally {
      this.#resuming.delete(token)
      if (lease !== undefined) {
        const { key, holder } = lease
        const release = (this.#store.release as NonNullable<SessionStore['release']>).bind(this.#store)
        if (late === undefined) await this.#bounded(release(key, holder)).catch(() => undefined)
        else {
          // The lease is kept until the unconfirmed delete settles: no other resumer reads the state meanwhile. A delete
          // that settles once the lease may have run out writes nothing back: another resumer may have run the program
          // since (a state lost is the lesser harm than an approved call run twice).
          const { deleting, restore } = late
          const { since, ttlMs } = lease
          void deleting
            .then(
              () => (performance.now() < since + ttlMs - this.#storeWaitMs ? restore() : undefined),
              () => undefined,
            )
            .catch(() => undefined)
            .then(() => release(key, holder))
            .catch(() => undefined)
        }
      }
    }
  }

  /**
   * Claims the resume of `token` for this process (see `resume`), for as long as a resumed run may take. A claim
   * of a process known gone is taken over; a live one's is `IN_PROGRESS`.
   */
  async #lease(
    token: string,
    config: DurableRunConfig,
    signal: AbortSignal,
    storeFailure: (error: unknown, what: string) => ResumeError,
    unavailable: (what: string) => ResumeError,
  ): Promise<Lease> {
    const store = this.#store
    const claim = store.claim as NonNullable<SessionStore['claim']>
    const ttlMs = Math.min(MAX_TIMER_MS, config.maxWallMs + this.#storeWaitMs + LEASE_MARGIN_MS)
    const lease: Lease = { key: `${token}${LEASE_SUFFIX}`, holder: claimHolder('resume'), since: 0, ttlMs }
    let replaces: string | undefined
    for (let attempt = 0; attempt < 2; attempt++) {
      // An aborted resume takes nothing: a claim asked for now would outlive it.
      if (signal.aborted) throw signal.reason
      lease.since = performance.now()
      const options = replaces === undefined ? undefined : { replaces }
      const claiming = Promise.resolve().then(() => claim(lease.key, lease.holder, ttlMs, options))
      let claimed: Awaited<ReturnType<typeof waitForStore<Awaited<ReturnType<typeof claim>>>>>
      try {
        claimed = await this.#bounded(claiming, signal)
      } catch (error) {
        throw storeFailure(error, 'to let this process resume')
      }
      if (!claimed.ok) {
        // Given up on (aborted, or the store is late): a claim it makes after all is released as it answers.
        const release = (store.release as NonNullable<SessionStore['release']>).bind(store)
        void claiming
          .then((other) => (other === undefined ? release(lease.key, lease.holder) : undefined))
          .catch(() => undefined)
        if (claimed.reason === 'abort') throw signal.reason
        throw unavailable('to let this process resume')
      }
      const other = claimed.value
      if (other === undefined) return lease
      if (!claimHolderGone(other.holder)) break
      replaces = other.holder
    }
    throw new ResumeError(
      'IN_PROGRESS',
      `the program of token ${shownToken(token)} is being resumed by another process`,
    )
  }

  /** Drops the suspended run in `state` (see `CodeRuntime.dropRun`); best effort, at most `storeWaitMs`. */
  async #drop(key: string, state: Uint8Array): Promise<void> {
    const runtime = this.#runtime
    if (runtime.dropRun === undefined || runtime.openRun === undefined) return
    const drop = runtime.dropRun.bind(runtime)
    await this.#bounded(runtime.openRun(key, state).then((opened) => drop(opened))).catch(() => undefined)
  }

  /** `operation` of the store, waited for at most `storeWaitMs` (and until `signal`, when given). */
  #bounded<T>(operation: Promise<T>, signal?: AbortSignal): ReturnType<typeof waitForStore<T>> {
    return waitForStore(operation, { deadline: performance.now() + this.#storeWaitMs, signal })
  }

  async #run(
    suspended: SuspendedRun,
    identity: RunIdentity,
    decisions: ApprovalDecision[],
    input: ToolResumeInput,
    services: ToolExecutorServices,
    config: DurableRunConfig,
    content: (value: JsonValue) => ToolExecutionResult['content'],
    putBack: () => Promise<void>,
    /** Deletes the leased state; whether the store confirmed it. `stops`: unconfirmed, the program is stopped. */
    consume?: (stops: boolean) => Promise<boolean>,
  ): Promise<ToolBatchResult> {
    const contexts: UserMessage[] = []
    let concluded = false
    const ctx: ToolRunContext = Object.freeze({
      callId: identity.callId,
      rootCallId: identity.rootCallId,
      name: RUN_CODE,
      arguments: identity.arguments ?? {},
      token: Symbol(identity.callId) as ToolExecutionToken,
      signal: input.signal,
      ...(input.agent !== undefined && { agent: input.agent }),
      ...(input.toolSet !== undefined && { toolSet: input.toolSet }),
      deferContext: (message: UserMessage) => void contexts.push(message),
      concludeTurn: () => void (concluded = true),
    })
    const log = new DispatchLog(services, ctx, input.agent?.session, config.logLimits)
    // Logged as going on once it does: its first call, or its end; a runtime that refuses it ran nothing.
    let wentOn = (_: boolean): void => undefined
    log.resumed(suspended.key, decisions, new Promise<boolean>((resolve) => (wentOn = resolve)))
    const numbering = { count: identity.subCalls }
    const scheduler = new SubCallScheduler(
      services,
      ctx,
      buildBindings(services, ctx),
      config.maxParallelSubCalls,
      log,
      config.drainGraceMs,
      {
        numbering,
        // No early bound on values: the run's limits are sealed in its state; the sandbox applies its maxResultChars.
        durable: { deferrable: true, decisions: [...decisions] },
        maxForwardedChars: config.maxForwardedChars,
      },
    )
    const next = this.begin(ctx, numbering)
    let run: CodeRunResult | undefined
    let logFailure: LogFailure | undefined
    // A leased state is deleted before the program's first call goes out: until then a process that dies leaves
    // it to be resumed again (the program has done nothing anyone sees); after, the calls it waited on may have
    // run, and must not again. Unconfirmed, the program is stopped there.
    const stop = new AbortController()
    const signal = AbortSignal.any([input.signal, stop.signal])
    let consumed: Promise<boolean> | undefined
    let unconsumed = false
    /** The resume has answered (a runtime that never did is given up on): a call of its program after that makes nothing go. */
    let over = false
    const goesOn = async (): Promise<void> => {
      if (consume === undefined) return
      if (over) throw new Error('the resume of this program has ended')
      if (await (consumed ??= consume(true))) return
      unconsumed = true
      stop.abort(new Error('the store did not confirm that it removed the state'))
      await new Promise<never>(() => undefined)
    }
    try {
      const call: ResumeRunRequest['call'] = async (name, args) => {
        wentOn(true)
        await goesOn()
        return scheduler.submit(name, args)
      }
      run = await answered(
        (config.runtime.resumeRun as NonNullable<CodeRuntime['resumeRun']>)(suspended, { call, signal, durable: next }),
        config.maxWallMs,
        config.runtime.name,
      )
      wentOn(true)
      // A program that made no call ends here: its state goes now (it did nothing that another resume would repeat).
      if (consume !== undefined && !unconsumed) await (consumed ??= consume(false))
    } catch (error) {
      // resumeRun throws only before the program goes on (misuse, a disposed runtime, a session store that failed
      // to give it its session): its state is not lost.
      const refused =
        error instanceof SandboxUsageError || (error instanceof SessionStoreError && error.code === 'unavailable')
      wentOn(!refused)
      if (refused) await putBack()
      throw error
    } finally {
      over = true
      logFailure = await scheduler.close(run?.error?.kind === 'timeout')
    }
    if (unconsumed) {
      throw new ResumeError(
        'STORE_UNAVAILABLE',
        `the store did not confirm within ${this.#storeWaitMs} ms that it removed the state of token ${shownToken(suspended.key)}, so the program was stopped before its first call: its state stays stored (written back if the store removes it late); try again later`,
      )
    }
    logFailure = (await this.suspended(run, next.key, log)) ?? logFailure
    let result: ToolExecutionResult
    try {
      const value = run.suspended !== undefined ? this.awaitingOf(run) : ended(run)
      result = { isError: false, value: value as JsonValue, content: content(value as JsonValue) }
    } catch (error) {
      result = failureResult('CODE_RUN_FAILED', error instanceof Error ? error.message : String(error))
    }
    // The listeners of the original call see its resumed outcome as they saw its first one.
    result = await services.complete(
      {
        callId: identity.callId,
        rootCallId: identity.rootCallId,
        name: RUN_CODE,
        arguments: ctx.arguments,
        signal: input.signal,
        ...(input.agent !== undefined && { agent: input.agent }),
        ...(input.toolSet !== undefined && { toolSet: input.toolSet }),
      },
      result,
    )
    if (input.log !== undefined) {
      log.resumedResult(result, input.log)
      logFailure = (await log.drain()) ?? logFailure
    }
    const results = [{ callId: identity.callId, result }]
    // As a batch whose session log failed: the results come with the error.
    if (logFailure !== undefined) throw sessionLogFailed(logFailure, results)
    return { results, additionalContexts: contexts, concluded: concluded && !result.isError }
  }
}

/** The value of an ended run, as `run_code` gives it; its failure thrown as `CodeRunFailedError`. */
function ended(run: CodeRunResult): JsonValue {
  if (run.error !== undefined) throw new CodeRunFailedError(run.error.kind, run.error.message, run.logs)
  return { logs: run.logs, ...(run.value !== undefined && { result: run.value }) }
}

function decisionsFor(decision: ToolResumeInput['decision'], parked: number): ApprovalDecision[] {
  const ok = (d: unknown): d is ApprovalDecision => d === 'allowed-once' || d === 'rejected'
  if (ok(decision)) return Array.from({ length: parked }, () => decision)
  if (Array.isArray(decision) && decision.every(ok)) {
    if (decision.length !== parked)
      throw new ResumeError(
        'BAD_DECISION',
        `the program waits on ${parked} call(s): give one decision, or ${parked}, not ${decision.length}`,
      )
    return [...decision]
  }
  throw new ResumeError(
    'BAD_DECISION',
    `a decision is 'allowed-once' or 'rejected' (or an array of them, one per waiting call), not ${JSON.stringify(decision)}`,
  )
}

/** `text`, or its first `max` characters and an ellipsis: what a message quotes of a text it does not bound. */
function cut(text: string, max: number): string {
  return text.length <= max ? text : `${textHead(text, max)}…`
}

/** A token as messages quote it: at most 100 characters of it, as JSON (a caller's token may be anything). */
function shownToken(token: string): string {
  return JSON.stringify(cut(token, 100))
}
