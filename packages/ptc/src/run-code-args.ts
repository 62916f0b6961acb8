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

export const RUN_CODE_PARAMETERS: ObjectJsonSchema = {
  type: 'object',
  properties: {
    code: {
      type: 'string',
      description: 'The body of an async function in JavaScript or TypeScript. Use await and return at top level; call tools as `await tools.name(args)`.',
    },
    description: { type: 'string', description: 'A short label of what the program does, shown to the user.' },
    timeoutMs: { type: 'integer', description: 'Optional wall-clock limit for this program in milliseconds.' },
  },
  required: ['code', 'description'],
  additionalProperties: false,
}

export const RUN_CODE_DESCRIPTION =
  'Run a short JavaScript/TypeScript program in a sandbox. Inside it every tool is an async function on `tools` ' +
  '(see the SDK declarations). Only what the program prints with console.log or returns comes back to you.'

/** Check `run_code` arguments with specific messages; every problem is listed. */
export function parseRunCodeArgs(args: unknown, maxTimeoutMs: number): RunCodeArgs {
  const problems: { path: string; message: string }[] = []
  const a = (typeof args === 'object' && args !== null && !Array.isArray(args) ? args : {}) as Record<string, unknown>
  if (a !== args) problems.push({ path: '', message: 'arguments must be an object { code, description, timeoutMs? }' })
  if (typeof a.code !== 'string') problems.push({ path: '/code', message: a.code === undefined ? 'is required' : 'must be a string of program text' })
  else if (a.code.trim() === '') problems.push({ path: '/code', message: 'is empty' })
  if (typeof a.description !== 'string') problems.push({ path: '/description', message: a.description === undefined ? 'is required' : 'must be a string' })
  else if (a.description.trim() === '') problems.push({ path: '/description', message: 'must not be blank: give a short label of what the program does' })
  const timeoutMs = a.timeoutMs
  if (timeoutMs !== undefined && (typeof timeoutMs !== 'number' || !Number.isInteger(timeoutMs) || timeoutMs <= 0)) {
    problems.push({ path: '/timeoutMs', message: 'must be a positive integer number of milliseconds' })
  } else if (typeof timeoutMs === 'number' && timeoutMs > maxTimeoutMs) {
    problems.push({ path: '/timeoutMs', message: `must be at most ${maxTimeoutMs} ms` })
  }
  for (const key of Object.keys(a)) if (!(key in (RUN_CODE_PARAMETERS.properties ?? {}))) problems.push({ path: `/${key}`, message: 'is not a run_code argument' })
  if (problems.length > 0) {
    throw new ToolArgsError(`invalid run_code arguments: ${problems.map((p) => `${p.path || '(root)'} ${p.message}`).join('; ')}`, problems)
  }
  return { code: a.code as string, description: a.description as string, ...(typeof timeoutMs === 'number' && { timeoutMs }) }
}
