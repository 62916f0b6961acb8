/**
 * What a model passes to `run_code`: the JSON Schema it is declared with, its description, and the
 * check of the arguments (every problem listed, with the ceiling of `timeoutMs`).
 */
import { ToolArgsError, type ObjectJsonSchema } from '@ptc/tools'

/** Validated `run_code` arguments. */
export interface RunCodeArgs {
  readonly code: string
  readonly description: string
  readonly timeoutMs?: number
}

/** Validated `run_code` arguments asking for the next part of a long run (`PtcExecutorOptions.longRuns`). */
export interface RunCodeWaitArgs {
  readonly wait: string
  readonly description: string
}

export const RUN_CODE_PARAMETERS: ObjectJsonSchema = {
  type: 'object',
  properties: {
    code: {
      type: 'string',
      description:
        'The body of an async function in JavaScript or TypeScript. Use await and return at top level; call tools ' +
        'as `await tools.name(args)`.',
    },
    description: { type: 'string', description: 'A short label of what the program does, shown to the user.' },
    timeoutMs: { type: 'integer', description: 'Optional wall-clock limit for this program in milliseconds.' },
  },
  required: ['code', 'description'],
  additionalProperties: false,
}

/**
 * `run_code`'s parameters when long runs are on: `code` or `wait` (the handle a part returned), each
 * with `description`.
 */
export const RUN_CODE_LONG_PARAMETERS: ObjectJsonSchema = {
  ...RUN_CODE_PARAMETERS,
  properties: {
    ...RUN_CODE_PARAMETERS.properties,
    code: {
      type: 'string',
      description:
        'The body of an async function in JavaScript or TypeScript. Use await and return at top level; call tools ' +
        'as `await tools.name(args)`. Omit it when you give `wait`.',
    },
    wait: {
      type: 'string',
      description:
        'The handle of a program still running (a previous run_code returned it): returns its next output, and its ' +
        'result once it ended. Give it instead of `code`.',
    },
  },
  required: ['description'],
}

export const RUN_CODE_DESCRIPTION =
  'Run a short JavaScript/TypeScript program in a sandbox. Inside it every tool is an async function on `tools` ' +
  '(see the SDK declarations). Only what the program prints with console.log or returns comes back to you.'

/** Check `run_code` arguments with specific messages; every problem is listed. */
export function parseRunCodeArgs(args: unknown, maxTimeoutMs: number): RunCodeArgs
export function parseRunCodeArgs(
  args: unknown,
  maxTimeoutMs: number,
  options: { wait: true },
): RunCodeArgs | RunCodeWaitArgs
export function parseRunCodeArgs(
  args: unknown,
  maxTimeoutMs: number,
  options?: { wait: boolean },
): RunCodeArgs | RunCodeWaitArgs {
  const problems: { path: string; message: string }[] = []
  const a = (typeof args === 'object' && args !== null && !Array.isArray(args) ? args : {}) as Record<string, unknown>
  const waits = options?.wait === true
  const schema = waits ? RUN_CODE_LONG_PARAMETERS : RUN_CODE_PARAMETERS
  if (a !== args)
    problems.push({
      path: '',
      message: `arguments must be an object { ${waits ? 'code or wait' : 'code'}, description, timeoutMs? }`,
    })
  if (waits && a.wait !== undefined) {
    if (typeof a.wait !== 'string' || a.wait === '')
      problems.push({ path: '/wait', message: 'must be the handle string a previous run_code returned' })
    if (a.code !== undefined)
      problems.push({
        path: '/code',
        message: 'goes without wait: give code for a new program, or wait for the next part of a running one',
      })
    if (a.timeoutMs !== undefined) problems.push({ path: '/timeoutMs', message: 'goes with code, not wait' })
  } else if (typeof a.code !== 'string')
    problems.push({
      path: '/code',
      message:
        a.code === undefined ? (waits ? 'is required (or wait)' : 'is required') : 'must be a string of program text',
    })
  else if (a.code.trim() === '') problems.push({ path: '/code', message: 'is empty' })
  if (typeof a.description !== 'string')
    problems.push({ path: '/description', message: a.description === undefined ? 'is required' : 'must be a string' })
  else if (a.description.trim() === '')
    problems.push({ path: '/description', message: 'must not be blank: give a short label of what the program does' })
  const timeoutMs = a.timeoutMs
  if (timeoutMs !== undefined && (typeof timeoutMs !== 'number' || !Number.isInteger(timeoutMs) || timeoutMs <= 0)) {
    problems.push({ path: '/timeoutMs', message: 'must be a positive integer number of milliseconds' })
  } else if (typeof timeoutMs === 'number' && timeoutMs > maxTimeoutMs) {
    problems.push({ path: '/timeoutMs', message: `must be at most ${maxTimeoutMs} ms` })
  }
  for (const key of Object.keys(a))
    if (!(key in (schema.properties ?? {}))) problems.push({ path: `/${key}`, message: 'is not a run_code argument' })
  if (problems.length > 0) {
    throw new ToolArgsError(
      `invalid run_code arguments: ${problems.map((p) => `${p.path || '(root)'} ${p.message}`).join('; ')}`,
      problems,
    )
  }
  if (waits && typeof a.wait === 'string') return { wait: a.wait, description: a.description as string }
  return {
    code: a.code as string,
    description: a.description as string,
    ...(typeof timeoutMs === 'number' && { timeoutMs }),
  }
}
