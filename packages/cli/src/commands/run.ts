import { randomBytes } from 'node:crypto'
import { stat } from 'node:fs/promises'
import { resolve } from 'node:path'
import { createPtcExecutor } from '@ptc/ptc'
import type { CodeRunSessionInfo } from '@ptc/sandbox'
import { RUN_CODE, type Agent, type ToolCallBlock } from '@ptc/tools'
import { JsonlSession } from '@ptc/tools/session'
import { oneOf, onePositional, parseCommandArgs, positiveInt } from '../args.js'
import { commandConfig, configuredService } from '../config/service.js'
import { safeJson } from '../escape.js'
import { CliError, firstLine } from '../errors.js'
import { oneLine } from '../format.js'
import { kindOf } from '../input-file.js'
import { LIMIT_OPTIONS, LIMITS_USAGE, limitFlags } from '../limit-flags.js'
import { writeLine, writeMessage, writeModelText, writeStyledLine, type CliIo } from '../io.js'
import { readProgram } from '../program-file.js'
import { APPROVE_MODES, approvalService, approveMode, configApproval } from '../run/approval.js'
import { progressLine, type ProgressLine } from '../run/progress.js'
import { RecordingSession } from '../run/recording-session.js'
import { DEFAULT_SESSION_DIR, sessionStateOptions } from '../run/session-state.js'
import { formatFooter, runReport, type RunReport } from '../run/report.js'
import { CLI_DEFAULT_MAX_PARALLEL, createRuntime, mergeLimits, recordingRuntime, SANDBOXES } from '../runtime.js'

export const RUN_USAGE = `ptc run FILE|- [options]
  Runs one program (the body of an async function, JavaScript or TypeScript) as a run_code call
  and prints what the model would receive; the sub-calls and byte figures go to stderr.
  --config FILE           a config made with defineConfig (default: ptc.config.{ts,mts,js,mjs} here)
  --tools MODULE          ES module exporting tools made with defineTool (default: the config's tools,
                          else the built-in demo shop); the config's setup, approval and limits still apply
  --sandbox NAME          quickjs or isolated-vm (default: the config's, else quickjs)
${LIMITS_USAGE}
  --session FILE.jsonl    append the session events to this file
  --session-state KEY     run in sandbox session KEY: the program starts with what the session's earlier
                          programs left (their top-level declarations and globalThis) and leaves its own
                          for the next; kept between runs in --session-dir (quickjs only)
  --session-dir DIR       where sessions are kept (default ${DEFAULT_SESSION_DIR}; a secret made there on first
                          use authenticates them)
  --approve yes|no|ask    answers to approval requests (default: the config's approval service, else
                          ask on a terminal, else no)
  --json                  print one JSON object { ok, text, value, logs, error, subCalls, bytes, session? }
  The limits' defaults are sized for a model's context (the sandbox's own are larger); flags win over them.
  The program must be a regular file of at most 1 MiB (the sandbox's maxProgramBytes).
  Every message on stderr escapes control and bidi characters it quotes (\\x1b, \\u202e). The
  model text on stdout is byte-exact when stdout is a pipe or a file and escaped the same way
  when it is a terminal; --json escapes them as \\u sequences (the same JSON value).`

const OPTIONS = {
  config: { type: 'string' },
  tools: { type: 'string' },
  sandbox: { type: 'string' },
  ...LIMIT_OPTIONS,
  'max-parallel': { type: 'string' },
  session: { type: 'string' },
  'session-state': { type: 'string' },
  'session-dir': { type: 'string' },
  approve: { type: 'string' },
  json: { type: 'boolean' },
} as const


/** `ptc run`: 0 when the run succeeded, 1 when the program failed, 2 (thrown `CliError`) on bad input. */
export async function runCommand(args: readonly string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseCommandArgs('run', args, OPTIONS)
  const file = onePositional('run', positionals, 'program file (or - for stdin)')
  const sandboxFlag = oneOf('sandbox', values.sandbox, SANDBOXES)
  const flags = limitFlags(values)
  const maxParallelSubCalls = positiveInt('max-parallel', values['max-parallel'], 'calls') ?? CLI_DEFAULT_MAX_PARALLEL
  const approve = approveMode(oneOf('approve', values.approve, APPROVE_MODES), io, file === '-')
  const program = await readProgram(file, io)
  const config = await commandConfig(values.config, io.cwd)
  // Flags win over the config, the config over the CLI's defaults.
  const sandbox = sandboxFlag ?? config?.config.sandbox ?? 'quickjs'
  const limits = mergeLimits(config?.config.limits, flags)

  // The progress line steps aside while an approval is written or asked for.
  let progress: ProgressLine | undefined
  const stepAside = (): (() => void) => progress?.suspend() ?? (() => undefined)
  const approval =
    values.approve === undefined && config?.config.approval !== undefined
      ? configApproval(config.config.approval, config.shown, io, stepAside)
      : approvalService(approve, io, values.approve !== undefined, stepAside)
  const { service, label } = await configuredService({ config, toolsModule: values.tools, cwd: io.cwd, approval, fallback: 'demo' })
  const stateKey = values['session-state']
  if (stateKey === undefined && values['session-dir'] !== undefined) throw new CliError('USAGE', '--session-dir goes with --session-state')
  const sessions = stateKey === undefined ? undefined : await sessionStateOptions(stateKey, values['session-dir'] ?? DEFAULT_SESSION_DIR, io.cwd)
  const runtime = recordingRuntime(await createRuntime(sandbox, limits, sessions))
  try {
    service.setExecutor(createPtcExecutor({ runtime, mode: 'code', limits, maxParallelSubCalls, ...(stateKey !== undefined && { sessions: { key: () => stateKey } }) }))
    const sessionFile = values.session === undefined ? undefined : await openSession(values.session, io.cwd)
    const session = new RecordingSession(sessionFile)
    progress = progressLine(io.stderr, { counts: () => session.subCalls })
    const controller = new AbortController()
    const onSignal = (): void => {
      progress?.stop()
      controller.abort(new Error('interrupted'))
    }
    // SIGTERM (a supervisor, a harness's timeout) ends the run as Ctrl-C does: aborted, reported, its log written.
    process.once('SIGINT', onSignal)
    process.once('SIGTERM', onSignal)
    // Unique per run, so that runs appending to one session file stay apart in `ptc log`.
    const callId = `call_${randomBytes(4).toString('hex')}`
    if (values.json !== true) writeMessage(io.stderr, `run_code "${oneLine(program.description, 200)}" on ${sandbox}, tools: ${label ?? 'none'}${config === undefined ? '' : `, config: ${config.shown}`}; the model receives:`)
    const started = performance.now()
    let batch
    try {
      progress.start()
      const agent: Agent = { id: 'ptc-cli', session }
      const call: ToolCallBlock = { type: 'tool_call', id: callId, name: RUN_CODE, arguments: JSON.stringify({ code: program.code, description: program.description }) }
      batch = await service.execute({ calls: [call], signal: controller.signal, agent, log: { turn: 1, step: 1 } })
    } finally {
      progress.stop()
      process.off('SIGINT', onSignal)
      process.off('SIGTERM', onSignal)
      await sessionFile?.close()
    }
    const result = batch.results[0]?.result
    if (result === undefined) throw new Error('run_code returned no result')
    const { report, subCalls } = runReport({ callId, result, run: runtime.last, events: session.events, sandbox, wallMs: performance.now() - started })
    if (values.json === true) {
      const state = runtime.last?.session
      writeLine(io.stdout, reportJson(state === undefined ? report : { ...report, session: state }, io))
      if (report.error !== null) writeMessage(io.stderr, `the program failed (${report.error.kind}): ${oneLine(firstLine(report.error.message), 200)}`, 'red')
    } else {
      writeModelText(io.stdout, report.text)
      for (const line of formatFooter(report, subCalls)) writeStyledLine(io.stderr, line)
    }
    const state = runtime.last?.session
    if (state !== undefined && values.json !== true) {
      const what = state.fresh ? 'new' : `continued (${state.runs} programs so far)`
      writeMessage(io.stderr, `session ${JSON.stringify(oneLine(state.key, 80))}: ${what}, ${state.kept ? `${state.bytes} bytes of state kept` : 'state of this run not kept'}${state.note === undefined ? '' : ` (${oneLine(state.note, 200)})`}`)
    }
    return report.ok ? 0 : 1
  } finally {
    await runtime.dispose()
  }
}

/** The report as JSON; a value too deeply nested for `JSON.stringify` (it recurses) becomes `null`, said on stderr. */
function reportJson(report: RunReport & { session?: CodeRunSessionInfo }, io: CliIo): string {
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
  if (info !== undefined && !info.isFile()) throw new CliError('SESSION', `cannot open session file ${path}: it is ${kindOf(info)}, not a regular file`)
  try {
    return await JsonlSession.open(resolve(cwd, path))
  } catch (error) {
    throw new CliError('SESSION', firstLine(error), { cause: error })
  }
}
