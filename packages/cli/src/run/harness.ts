/**
 * What `ptc run` and `ptc resume` share: the registry and runtime they build from the config and the flags,
 * the batch they run under Ctrl-C and the progress line, and how its outcome is printed.
 */
import { stat } from 'node:fs/promises'
import { resolve } from 'node:path'
import { createPtcExecutor } from '@ptc/ptc'
import type { CodeRunLimits, CodeRunSessionInfo } from '@ptc/sandbox'
import type { Agent, JsonValue, ToolBatchResult, ToolsService } from '@ptc/tools'
import { JsonlSession } from '@ptc/tools/session'
import { oneOf } from '../args.js'
import { commandConfig, configuredService } from '../config/service.js'
import {
  checkAlwaysLoaded,
  DISCOVERY_OPTIONS,
  DISCOVERY_USAGE,
  discoveryFlags,
  discoveryOption,
} from '../discovery-flags.js'
import type { LoadedConfig } from '../config/load.js'
import { safeJson } from '../escape.js'
import { CliError, firstLine } from '../errors.js'
import { oneLine } from '../format.js'
import { isRecord } from '../records.js'
import { kindOf } from '../input-file.js'
import { writeLine, writeMessage, writeModelText, writeStyledLine, type CliIo } from '../io.js'
import { APPROVE_MODES, approvalService, approveMode, configApproval } from './approval.js'
import { limitHint, limitSources } from './limit-hint.js'
import { progressLine, type ProgressLine } from './progress.js'
import { RecordingSession } from './recording-session.js'
import { DEFAULT_DURABLE_DIR, DEFAULT_SESSION_DIR, durableFolder, sessionStateOptions } from './session-state.js'
import { formatFooter, runReport, type RunReport } from './report.js'
import { createRuntime, mergeLimits, recordingRuntime, SANDBOXES, type RecordingRuntime } from '../runtime.js'

/** The options both commands take. */
export const HARNESS_OPTIONS = {
  config: { type: 'string' },
  tools: { type: 'string' },
  sandbox: { type: 'string' },
  session: { type: 'string' },
  'session-state': { type: 'string' },
  'session-dir': { type: 'string' },
  approve: { type: 'string' },
  'durable-dir': { type: 'string' },
  json: { type: 'boolean' },
  ...DISCOVERY_OPTIONS,
} as const

/** Their usage lines, in the order both commands print them. */
export const HARNESS_USAGE = {
  tools: `  --config FILE           a config made with defineConfig (default: ptc.config.{ts,mts,js,mjs} here)
  --tools MODULE          ES module exporting tools made with defineTool (default: the config's tools,
                          else the built-in demo shop); the config's setup, approval and limits still apply
  --sandbox NAME          quickjs or isolated-vm (default: the config's, else quickjs)
${DISCOVERY_USAGE}`,
  state: `  --session FILE.jsonl    append the session events to this file
  --session-state KEY     run in sandbox session KEY: the program starts with what the session's earlier
                          programs left (their top-level declarations and globalThis) and leaves its own
                          for the next; kept between runs in --session-dir (quickjs only)
  --session-dir DIR       where sessions are kept (default ${DEFAULT_SESSION_DIR}; a secret made there on first
                          use authenticates them)
  --approve yes|no|ask|defer
                          answers to approval requests (default: the config's approval service, else
                          ask on a terminal, else no); defer: the program suspends at the call, is kept in
                          --durable-dir and goes on with \`ptc resume\` (exit status 3; quickjs only)
  --durable-dir DIR       where suspended programs are kept (default ${DEFAULT_DURABLE_DIR}, a secret made there
                          authenticates them; a session's secret does when --session-state is given)
  --json                  print one JSON object { ok, text, value, logs, error, subCalls, bytes, session?,
                          awaiting? }`,
}

type HarnessValues = {
  [K in keyof typeof HARNESS_OPTIONS]?: (typeof HARNESS_OPTIONS)[K] extends { multiple: true }
    ? string[]
    : (typeof HARNESS_OPTIONS)[K]['type'] extends 'boolean'
      ? boolean
      : string
}

/** Exit status of a program that suspended awaiting an approval (`--approve defer`). */
export const EXIT_AWAITING = 3

export interface Harness {
  readonly service: ToolsService
  readonly runtime: RecordingRuntime
  readonly sandbox: string
  /** Where the tools came from, for the first line on stderr. */
  readonly label: string | undefined
  /** The tools are the built-in demo shop's: `ptc run` shows the program it runs. */
  readonly demo: boolean
  readonly config: LoadedConfig | undefined
  /** The progress line while a batch runs: approvals written or asked for step it aside. */
  readonly progress: { line: ProgressLine | undefined }
  /** For a run stopped at one of its limits: the setting, where its value came from and how to raise it. */
  readonly limitHint: (error: { readonly kind: string; readonly message: string }) => string | undefined
}

export interface HarnessSetup {
  readonly values: HarnessValues
  readonly io: CliIo
  /** The program is read from stdin (`ask` cannot prompt then). */
  readonly programFromStdin: boolean
  /** Limits given as flags (`ptc run`). */
  readonly limitFlags?: Partial<CodeRunLimits>
  readonly maxParallelSubCalls?: number
  /** Suspended programs are kept whatever the flags say (`ptc resume`). */
  readonly durable?: boolean
}

/** Builds the registry, the runtime and the executor of one command; the caller disposes `runtime`. */
export async function openHarness(setup: HarnessSetup): Promise<Harness> {
  const { values, io } = setup
  const sandboxFlag = oneOf('sandbox', values.sandbox, SANDBOXES)
  const discoveryAsked = discoveryFlags(values)
  const approve = approveMode(oneOf('approve', values.approve, APPROVE_MODES), io, setup.programFromStdin)
  const config = await commandConfig(values.config, io.cwd)
  // Flags win over the config, the config over the CLI's defaults.
  const sandbox = sandboxFlag ?? config?.config.sandbox ?? 'quickjs'
  const limits = mergeLimits(config?.config.limits, setup.limitFlags)
  const discovery = discoveryOption(config?.config.discovery, discoveryAsked)
  const fromConfig = config === undefined ? undefined : { limits: config.config.limits, shown: config.shown }
  const sources = limitSources(fromConfig, setup.limitFlags)
  const progress: Harness['progress'] = { line: undefined }
  const stepAside = (): (() => void) => progress.line?.suspend() ?? (() => undefined)
  const approval =
    values.approve === undefined && config?.config.approval !== undefined
      ? configApproval(config.config.approval, config.shown, io, stepAside)
      : approvalService(approve, io, values.approve !== undefined, stepAside)
  const { service, label, demo } = await configuredService({
    config,
    toolsModule: values.tools,
    cwd: io.cwd,
    approval,
    fallback: 'demo',
  })
  if (discovery !== false) {
    const names = service.definitions().map((t) => t.name)
    checkAlwaysLoaded(discoveryAsked, config && { ...config.config, shown: config.shown }, names)
  }
  const stateKey = values['session-state']
  if (stateKey === undefined && values['session-dir'] !== undefined)
    throw new CliError('USAGE', '--session-dir goes with --session-state')
  const sessions =
    stateKey === undefined
      ? undefined
      : await sessionStateOptions(stateKey, values['session-dir'] ?? DEFAULT_SESSION_DIR, io.cwd)
  const durable = setup.durable === true || approve === 'defer' || values['durable-dir'] !== undefined
  if (durable && sandbox !== 'quickjs') {
    throw new CliError(
      'USAGE',
      `a program that waits for an approval (--approve defer, --durable-dir, ptc resume) needs the quickjs sandbox; ` +
        `${sandbox} cannot suspend one`,
    )
  }
  const folder = durable ? await durableFolder(values['durable-dir'] ?? DEFAULT_DURABLE_DIR, io.cwd) : undefined
  const runtime = recordingRuntime(
    await createRuntime(sandbox, limits, { sessions, secret: sessions === undefined ? folder?.secret : undefined }),
  )
  try {
    service.setExecutor(
      createPtcExecutor({
        runtime,
        mode: 'code',
        limits,
        ...(setup.maxParallelSubCalls !== undefined && { maxParallelSubCalls: setup.maxParallelSubCalls }),
        ...(stateKey !== undefined && { sessions: { key: () => stateKey } }),
        ...(folder !== undefined && { durable: { store: folder.store } }),
        ...(discovery !== undefined && { discovery }),
      }),
    )
  } catch (error) {
    await runtime.dispose()
    throw error
  }
  const hint: Harness['limitHint'] = (error) => limitHint(error, limits, sources)
  return { service, runtime, sandbox, label, demo, config, progress, limitHint: hint }
}

/** One batch's run: the agent it runs for, aborted on Ctrl-C or SIGTERM. */
type Batch = (agent: Agent, signal: AbortSignal) => Promise<ToolBatchResult>

/**
 * Runs `batch` (the run_code call, or its resume) with the progress line and the session file, then prints
 * what the model receives (or `--json`) and the footer. `what` names the batch on the first line of stderr, after
 * what `preface` writes (once the run is sure to start).
 * Returns the exit status: 0, 1 (the program failed) or 3 (it waits for an approval).
 */
export async function runHarnessBatch(
  harness: Harness,
  values: HarnessValues,
  io: CliIo,
  what: string,
  batch: Batch,
  preface?: () => void,
): Promise<number> {
  const { runtime, config, label, sandbox } = harness
  const sessionFile = values.session === undefined ? undefined : await openSession(values.session, io.cwd)
  preface?.()
  if (values.json !== true)
    writeMessage(
      io.stderr,
      `${what} on ${sandbox}, tools: ${label ?? 'none'}${config === undefined ? '' : `, config: ${config.shown}`}; ` +
        `the model receives:`,
    )
  const session = new RecordingSession(sessionFile)
  const progress = progressLine(io.stderr, { counts: () => session.subCalls })
  harness.progress.line = progress
  const controller = new AbortController()
  const onSignal = (): void => {
    progress.stop()
    controller.abort(new Error('interrupted'))
  }
  // SIGTERM (a supervisor, a harness's timeout) ends the run as Ctrl-C does: aborted, reported, its log written.
  process.once('SIGINT', onSignal)
  process.once('SIGTERM', onSignal)
  const started = performance.now()
  let outcome: ToolBatchResult
  try {
    progress.start()
    outcome = await batch({ id: 'ptc-cli', session }, controller.signal)
  } finally {
    progress.stop()
    harness.progress.line = undefined
    process.off('SIGINT', onSignal)
    process.off('SIGTERM', onSignal)
    await sessionFile?.close()
  }
  const first = outcome.results[0]
  if (first === undefined) throw new Error('run_code returned no result')
  const { result, callId } = first
  const { report, subCalls } = runReport({
    callId,
    result,
    run: runtime.last,
    events: session.events,
    sandbox: harness.sandbox,
    wallMs: performance.now() - started,
  })
  const awaiting = awaitingOf(result.isError ? undefined : result.value)
  const state = runtime.last?.session
  if (values.json === true) {
    writeLine(
      io.stdout,
      reportJson(
        { ...report, ...(state !== undefined && { session: state }), ...(awaiting !== undefined && { awaiting }) },
        io,
      ),
    )
    if (report.error !== null)
      writeMessage(
        io.stderr,
        `the program failed (${report.error.kind}): ${oneLine(firstLine(report.error.message), 200)}`,
        'red',
      )
  } else {
    writeModelText(io.stdout, report.text)
    for (const line of formatFooter(report, subCalls, awaiting !== undefined)) writeStyledLine(io.stderr, line)
  }
  const hint = report.error === null ? undefined : harness.limitHint(report.error)
  if (hint !== undefined) writeMessage(io.stderr, hint, 'yellow')
  if (state !== undefined && values.json !== true) {
    const what = state.fresh ? 'new' : `continued (${state.runs} programs so far)`
    writeMessage(
      io.stderr,
      `session ${JSON.stringify(oneLine(state.key, 80))}: ${what}, ` +
        `${state.kept ? `${state.bytes} bytes of state kept` : 'state of this run not kept'}${state.note === undefined ? '' : ` (${oneLine(state.note, 200)})`}`,
    )
  }
  if (awaiting !== undefined) {
    const calls = awaiting.calls
      .map((call) => `${call.tool}${call.reason === undefined ? '' : ` (${oneLine(call.reason, 120)})`}`)
      .join(', ')
    writeMessage(
      io.stderr,
      `the program waits for an approval of ${calls}; go on with: ptc resume ${awaiting.token} --decision ` +
        `allow|reject${resumeFlags(values)}`,
      'yellow',
    )
    return EXIT_AWAITING
  }
  return report.ok ? 0 : 1
}

interface Awaiting {
  readonly token: string
  readonly calls: readonly { readonly tool: string; readonly reason?: string }[]
}

/** The `awaiting` of a run_code value (`{ logs, awaiting: { token, calls } }`), if it suspended. */
function awaitingOf(value: JsonValue | undefined): Awaiting | undefined {
  const awaiting = isRecord(value) ? value['awaiting'] : undefined
  if (!isRecord(awaiting) || typeof awaiting['token'] !== 'string' || !Array.isArray(awaiting['calls']))
    return undefined
  const calls = awaiting['calls'].map((call: unknown) => {
    const c = isRecord(call) ? call : {}
    return {
      tool: typeof c['tool'] === 'string' ? c['tool'] : '?',
      ...(typeof c['reason'] === 'string' && { reason: c['reason'] }),
    }
  })
  return { token: awaiting['token'], calls }
}

/**
 * The flags `ptc resume` needs to find what the run used (its tools, session and folder), and `--approve defer`:
 * a call the program asks approval for after it goes on waits again, as in the run, rather than being asked
 * on a terminal that may not be there (where no answer is a rejection).
 */
function resumeFlags(values: HarnessValues): string {
  const flags: string[] = []
  for (const name of ['config', 'tools', 'session-state', 'session-dir', 'durable-dir', 'discovery-budget'] as const) {
    const value = values[name]
    if (value !== undefined) flags.push(`--${name} ${shellWord(value)}`)
  }
  // The program may call search_tools (discovery on) or a tool of that name (off): its resume needs the same.
  for (const name of values['always-load'] ?? []) flags.push(`--always-load ${shellWord(name)}`)
  if (values['no-discovery'] === true) flags.push('--no-discovery')
  flags.push('--approve defer')
  return ` ${flags.join(' ')}`
}

/** A word as a POSIX shell reads it back. */
function shellWord(text: string): string {
  return /^[\w@%+=:,./-]+$/.test(text) ? text : `'${text.replace(/'/g, `'\\''`)}'`
}

/** The report as JSON; a value too deeply nested for `JSON.stringify` (it recurses) becomes `null`, said on stderr. */
function reportJson(report: RunReport & { session?: CodeRunSessionInfo; awaiting?: Awaiting }, io: CliIo): string {
  try {
    return safeJson(report)
  } catch (error) {
    writeMessage(io.stderr, `the program's value cannot be printed as JSON (${firstLine(error)}); "value" is null`)
    return safeJson({ ...report, value: null })
  }
}

/**
 * Opens (creating) the session file before the run: a missing folder is a
 * usage error and creates nothing; so is a path that is not a regular file (a
 * FIFO would block the run's writes, a device would swallow or refuse them).
 */
async function openSession(path: string, cwd: string): Promise<JsonlSession> {
  const info = await stat(resolve(cwd, path)).catch(() => undefined)
  if (info !== undefined && !info.isFile())
    throw new CliError('SESSION', `cannot open session file ${path}: it is ${kindOf(info)}, not a regular file`)
  try {
    return await JsonlSession.open(resolve(cwd, path))
  } catch (error) {
    throw new CliError('SESSION', firstLine(error), { cause: error })
  }
}
