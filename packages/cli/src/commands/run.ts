import { randomBytes } from 'node:crypto'
import { RUN_CODE, type Agent, type ToolBatchResult, type ToolCallBlock } from '@ptc/tools'
import { onePositional, parseCommandArgs, positiveInt } from '../args.js'
import { LIMIT_OPTIONS, LIMITS_USAGE, limitFlags } from '../limit-flags.js'
import { oneLine } from '../format.js'
import { writeLine, writeMessage, type CliIo } from '../io.js'
import { readProgram, type ProgramFile } from '../program-file.js'
import { HARNESS_OPTIONS, HARNESS_USAGE, openHarness, runHarnessBatch } from '../run/harness.js'
import { CLI_DEFAULT_MAX_PARALLEL } from '../runtime.js'

export const RUN_USAGE = `ptc run FILE|- [options]
  Runs one program (the body of an async function, JavaScript or TypeScript) as a run_code call
  and prints what the model would receive; the sub-calls and byte figures go to stderr.
${HARNESS_USAGE.tools}
${LIMITS_USAGE}
${HARNESS_USAGE.state}
  The limits' defaults are sized for a model's context (the sandbox's own are larger); flags win over them.
  The program must be a regular file of at most 1 MiB (the sandbox's maxProgramBytes).
  Every message on stderr escapes control and bidi characters it quotes (\\x1b, \\u202e). The
  model text on stdout is byte-exact when stdout is a pipe or a file and escaped the same way
  when it is a terminal; --json escapes them as \\u sequences (the same JSON value).`

const OPTIONS = {
  ...HARNESS_OPTIONS,
  ...LIMIT_OPTIONS,
  'max-parallel': { type: 'string' },
} as const

/**
 * `ptc run`: 0 when the run succeeded, 1 when the program failed, 3 when it waits for an approval, 2 (thrown
 * `CliError`) on bad input.
 */
export async function runCommand(args: readonly string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseCommandArgs('run', args, OPTIONS)
  const file = onePositional('run', positionals, 'program file (or - for stdin)')
  const flags = limitFlags(values)
  const maxParallelSubCalls = positiveInt('max-parallel', values['max-parallel'], 'calls') ?? CLI_DEFAULT_MAX_PARALLEL
  const program = await readProgram(file, io)
  const harness = await openHarness({
    values,
    io,
    programFromStdin: file === '-',
    limitFlags: flags,
    maxParallelSubCalls,
  })
  try {
    // Unique per run, so that runs appending to one session file stay apart in `ptc log`.
    const callId = `call_${randomBytes(4).toString('hex')}`
    const preface = harness.demo && values.json !== true ? () => showProgram(program, io) : undefined
    const call: ToolCallBlock = {
      type: 'tool_call',
      id: callId,
      name: RUN_CODE,
      arguments: JSON.stringify({ code: program.code, description: program.description }),
    }
    const what = `run_code "${oneLine(program.description, 200)}"`
    const batch = (agent: Agent, signal: AbortSignal): Promise<ToolBatchResult> =>
      harness.service.execute({ calls: [call], signal, agent, log: { turn: 1, step: 1 } })
    return await runHarnessBatch(harness, values, io, what, batch, preface)
  } finally {
    await harness.runtime.dispose()
  }
}

/** The most program lines `showProgram` lists. */
const SHOWN_LINES = 60
/** Lines for the tools that read a program file, not for the reader: a lint or type-check switch. */
const DIRECTIVE = /^\s*(\/\*\s*eslint-disable\b.*\*\/|\/\/\s*@ts-nocheck)\s*$/

/** The demo shows the program it runs (stderr, indented under one message), as a model would send it. */
function showProgram(program: ProgramFile, io: CliIo): void {
  const lines = program.code.replace(/\n+$/, '').split('\n')
  while (lines.length > 0 && DIRECTIVE.test(lines[0] ?? '')) lines.shift()
  const shown = program.path === '-' ? '(stdin)' : program.path
  writeMessage(io.stderr, `the program ${shown}, as a model writes it for run_code:`)
  for (const line of lines.slice(0, SHOWN_LINES)) writeLine(io.stderr, `  | ${line}`)
  if (lines.length > SHOWN_LINES) writeLine(io.stderr, `  | … (${lines.length - SHOWN_LINES} more lines)`)
}
