import { MAX_TIMER_MS, type CodeRunLimits } from '@ptc/sandbox'
import { positiveInt } from './args.js'
import { CLI_DEFAULT_LIMITS, CLI_DEFAULT_MAX_PARALLEL } from './runtime.js'

/** The limit options of `ptc run` (for `parseCommandArgs`). */
export const LIMIT_OPTIONS = {
  timeout: { type: 'string' },
  cpu: { type: 'string' },
  wall: { type: 'string' },
  memory: { type: 'string' },
  'max-output': { type: 'string' },
  'max-sub-calls': { type: 'string' },
  'max-result-chars': { type: 'string' },
  'max-argument-chars': { type: 'string' },
} as const

export type LimitFlagValues = { readonly [K in keyof typeof LIMIT_OPTIONS]?: string | undefined }

const d = CLI_DEFAULT_LIMITS
const seconds = (ms: number): string => `${ms / 1000} s`

/** The usage lines of the limit options, with the defaults and why they are what they are. */
export const LIMITS_USAGE = `  --cpu MS                guest CPU time; waiting on tools is not charged (default ${d.cpuMs} = ${seconds(d.cpuMs)}:
                          computing between tool calls takes milliseconds, more is a runaway loop)
  --wall MS               wall-clock limit of the run (default ${d.wallMs} = ${seconds(d.wallMs)}: under the 60 s an MCP
                          client waits for a tool call, so the model gets the timeout message)
  --timeout MS            --cpu and --wall at once (each of those wins over it)
  --memory MB             sandbox memory in MiB (default ${d.memoryBytes / 1024 / 1024}: tool results stay in the sandbox)
  --max-output BYTES      logs + value the model receives (default ${d.maxOutputBytes} = ${d.maxOutputBytes / 1024} KiB, about
                          ${Math.round(d.maxOutputBytes / 4000)}k tokens of its context; past it the run fails with output-limit)
  --max-sub-calls N       tool calls per run (default ${d.maxSubCalls}: each reaches a real service; at most
                          ${d.maxPendingSubCalls} wait for a slot at once)
  --max-result-chars N    the longest JSON text of one tool result the program receives (default ${d.maxResultChars}:
                          each character costs the host work; a longer result rejects its call)
  --max-argument-chars N  the longest JSON text of one tool call's arguments the host takes (default
                          ${d.maxArgumentChars}: as a result's; longer arguments reject their call)
  --max-parallel N        concurrency-safe sub-calls that may overlap (default ${CLI_DEFAULT_MAX_PARALLEL})`

/** The limits the flags ask for (a usage error for a malformed one); absent flags are absent. */
export function limitFlags(values: LimitFlagValues): Partial<CodeRunLimits> {
  const timeoutMs = positiveInt('timeout', values.timeout, 'milliseconds', MAX_TIMER_MS)
  const cpuMs = positiveInt('cpu', values.cpu, 'milliseconds', MAX_TIMER_MS) ?? timeoutMs
  const wallMs = positiveInt('wall', values.wall, 'milliseconds', MAX_TIMER_MS) ?? timeoutMs
  // 2^20 MiB keeps the byte count a safe integer.
  const memoryMb = positiveInt('memory', values.memory, 'megabytes', 2 ** 20)
  const maxOutputBytes = positiveInt('max-output', values['max-output'], 'bytes')
  const maxSubCalls = positiveInt('max-sub-calls', values['max-sub-calls'], 'calls')
  const maxResultChars = positiveInt('max-result-chars', values['max-result-chars'], 'characters')
  const maxArgumentChars = positiveInt('max-argument-chars', values['max-argument-chars'], 'characters')
  return {
    ...(cpuMs !== undefined && { cpuMs }),
    ...(wallMs !== undefined && { wallMs }),
    ...(memoryMb !== undefined && { memoryBytes: memoryMb * 1024 * 1024 }),
    ...(maxOutputBytes !== undefined && { maxOutputBytes }),
    ...(maxSubCalls !== undefined && { maxSubCalls }),
    ...(maxResultChars !== undefined && { maxResultChars }),
    ...(maxArgumentChars !== undefined && { maxArgumentChars }),
  }
}
