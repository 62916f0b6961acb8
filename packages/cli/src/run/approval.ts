import { createInterface } from 'node:readline/promises'
import type { ApprovalOutcome, ApprovalRequest, ApprovalService } from '@ptc/tools'
import { escapeControl } from '../escape.js'
import { CliError, firstLine } from '../errors.js'
import { oneLine } from '../format.js'
import { MESSAGE_PREFIX, writeMessage, type CliIo } from '../io.js'

export const APPROVE_MODES = ['yes', 'no', 'ask', 'defer'] as const
export type ApproveMode = (typeof APPROVE_MODES)[number]

/**
 * The mode to use: the one asked for, else `ask` on a terminal and `no`
 * otherwise. `ask` needs an interactive stdin that is not the program itself.
 */
export function approveMode(requested: ApproveMode | undefined, io: CliIo, programFromStdin: boolean): ApproveMode {
  const interactive = io.stdin.isTTY === true && !programFromStdin
  if (requested === 'ask' && !interactive) {
    const why = programFromStdin ? 'the program is read from stdin' : 'stdin is not a terminal'
    throw new CliError(
      'USAGE',
      `--approve ask needs to prompt on a terminal, but ${why}; use --approve yes or --approve no`,
    )
  }
  return requested ?? (interactive ? 'ask' : 'no')
}

function describe(request: ApprovalRequest): string {
  return request.displayReason?.en ?? request.reason ?? `call ${request.exec.name}`
}

/**
 * Answers `ask` decisions: always yes, always no, a y/N prompt on the terminal (one at a time), or later
 * (`defer`: the program suspends, for `ptc resume`).
 * `stepAside` takes whatever else draws on stderr (the progress line) off the screen while it writes or
 * prompts, until the function it returns is called.
 */
export function approvalService(
  mode: ApproveMode,
  io: CliIo,
  explicit: boolean,
  stepAside: () => () => void = () => () => undefined,
): ApprovalService {
  let queue: Promise<unknown> = Promise.resolve()
  const decide = async (request: ApprovalRequest): Promise<ApprovalOutcome> => {
    // The name, id and reason may quote the program's arguments: one escaped line.
    const what = `${request.exec.name} (${request.exec.callId}): ${oneLine(describe(request), 300)}`
    if (mode === 'yes') {
      writeMessage(io.stderr, `approved ${what}`, 'green')
      return 'allowed-once'
    }
    if (mode === 'defer') {
      writeMessage(io.stderr, `deferred ${what}`, 'yellow')
      return 'deferred'
    }
    if (mode === 'no') {
      writeMessage(
        io.stderr,
        `rejected ${what}${explicit ? '' : ' (pass --approve yes to allow, or --approve ask on a terminal)'}`,
        'yellow',
      )
      return {
        outcome: 'rejected',
        by: explicit ? '--approve no' : 'ptc run without a terminal to ask on (--approve no)',
      }
    }
    return prompt(
      io,
      `${MESSAGE_PREFIX}${escapeControl(`approve ${what}${what.endsWith('?') ? '' : '?'}`)} [y/N] `,
      request.signal,
    )
  }
  return {
    request: (request) => {
      const answer = queue.then(async () => {
        const resume = stepAside()
        try {
          return await decide(request)
        } finally {
          resume()
        }
      })
      queue = answer.catch(() => undefined)
      return answer
    },
  }
}

async function prompt(io: CliIo, question: string, signal: AbortSignal): Promise<ApprovalOutcome> {
  const rl = createInterface({ input: io.stdin, output: io.stderr, terminal: true })
  try {
    const reply = await rl.question(question, { signal })
    return /^\s*y(es)?\s*$/i.test(reply) ? 'allowed-once' : { outcome: 'rejected', by: 'the user, at the prompt' }
  } catch {
    return 'cancelled'
  } finally {
    rl.close()
  }
}

/**
 * A config's approval service, saying each answer on stderr the way `--approve`
 * does (`ptc: approved … (ptc.config.ts)`). What it throws reaches the pipeline,
 * which denies the call with the reason.
 */
export function configApproval(
  service: ApprovalService,
  shown: string,
  io: CliIo,
  stepAside: () => () => void = () => () => undefined,
): ApprovalService {
  return {
    request: async (request) => {
      const what = `${request.exec.name} (${request.exec.callId}): ${oneLine(describe(request), 300)}`
      let outcome: ApprovalOutcome
      try {
        outcome = await service.request(request)
      } catch (error) {
        const resume = stepAside()
        try {
          writeMessage(
            io.stderr,
            `the approval service of ${shown} failed on ${what}: ${oneLine(firstLine(error), 200)}`,
            'red',
          )
        } finally {
          resume()
        }
        throw error
      }
      const answer =
        typeof outcome === 'object' && outcome !== null ? (outcome as { outcome?: unknown }).outcome : outcome
      const said =
        answer === 'allowed-once'
          ? 'approved'
          : answer === 'rejected'
            ? 'rejected'
            : `answered ${typeof answer === 'string' ? JSON.stringify(oneLine(answer, 40)) : typeof answer} to`
      const resume = stepAside()
      try {
        writeMessage(io.stderr, `${said} ${what} (by ${shown})`, answer === 'allowed-once' ? 'green' : 'yellow')
      } finally {
        resume()
      }
      // The model is told who decided: the config's code, unless the service named someone itself.
      return outcome === 'rejected' ? { outcome, by: `the approval service of ${shown}` } : outcome
    },
  }
}
