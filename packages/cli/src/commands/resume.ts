import { ResumeError } from '@ptc/ptc'
import { SandboxUsageError } from '@ptc/sandbox'
import { SessionStoreError } from '@ptc/sandbox/session'
import type { ApprovalDecision } from '@ptc/tools'
import { onePositional, oneOf, parseCommandArgs } from '../args.js'
import { CliError, firstLine } from '../errors.js'
import { oneLine } from '../format.js'
import type { CliIo } from '../io.js'
import { HARNESS_OPTIONS, HARNESS_USAGE, openHarness, runHarnessBatch } from '../run/harness.js'

export const RESUME_USAGE = `ptc resume TOKEN --decision allow|reject [options]
  Continues a program that \`ptc run --approve defer\` left waiting for an approval (its token is on
  stderr, and in --json's "awaiting"), here or in another process or machine that shares the folder:
  the calls it waits on run if allowed, or throw a ToolCallError with code DENIED in the program if
  rejected, and the program goes on where it waited. Prints what the model receives, as ptc run does.
  Give the tools, session and folder flags the run had, and --approve defer for a later call that asks
  to wait again (the command ptc run printed has them); the run's own limits go on with it.
  --decision allow|reject the decision for the calls the program waits on
${HARNESS_USAGE.tools}
${HARNESS_USAGE.state}
  A token resumes once: a second resume of it, an unknown or expired token, or a folder whose secret
  did not seal it is refused (exit status 2) and changes nothing.`

const OPTIONS = {
  ...HARNESS_OPTIONS,
  decision: { type: 'string' },
} as const

const DECISIONS = { allow: 'allowed-once', reject: 'rejected' } as const satisfies Record<string, ApprovalDecision>

/** `ptc resume`: the exit statuses of `ptc run`; a token that cannot be resumed is a `CliError` (2). */
export async function resumeCommand(args: readonly string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseCommandArgs('resume', args, OPTIONS)
  const token = onePositional('resume', positionals, 'token (printed by ptc run --approve defer)')
  const chosen = oneOf('decision', values.decision, ['allow', 'reject'] as const)
  if (chosen === undefined)
    throw new CliError('USAGE', 'missing --decision allow or --decision reject; see `ptc resume --help`')
  const harness = await openHarness({ values, io, programFromStdin: false, durable: true })
  try {
    return await runHarnessBatch(
      harness,
      values,
      io,
      `resume ${oneLine(token, 100)} (${chosen})`,
      async (agent, signal) => {
        try {
          return await harness.service.resume({
            token,
            decision: DECISIONS[chosen],
            agent,
            signal,
            log: { turn: 2, step: 1 },
          })
        } catch (error) {
          // Refused before the program went on (the state stays stored): the token, its state, or this runtime (a
          // program of a session whose store these flags do not give, a session store that failed).
          if (
            !(error instanceof ResumeError || error instanceof SandboxUsageError || error instanceof SessionStoreError)
          )
            throw error
          const refused =
            (error instanceof ResumeError && error.code === 'STATE_REFUSED') || error instanceof SandboxUsageError
          const hint = refused
            ? ' (give the --durable-dir, and --session-state and --session-dir if it had them, that the run had)'
            : ''
          throw new CliError(
            'RESUME',
            `cannot resume ${oneLine(token, 100)}: ${oneLine(firstLine(error), 600)}${hint}`,
            { cause: error },
          )
        }
      },
    )
  } finally {
    await harness.runtime.dispose()
  }
}
