import { FinishKind, cutCharsOf, formatGuestError, parseProgramValue, stopError } from '@ptc/sandbox/backend'
import type { CodeRunError, CodeRunLimits, JsonValue } from '@ptc/sandbox'
import type { GuestErrorInfo, OutputLedger, PreparedProgram } from '@ptc/sandbox/backend'
import { lostControl, MALFORMED_COMPLETION, UNREADABLE_ERROR } from '../messages.js'

/**
 * How a run ends, in the terms of `RunHost`'s finish. `stop`: the engine has not ended the run itself and
 * must be told to. `cutChars`: what the guest cut from the end of the error's message (`GuestErrorInfo.cutChars`).
 */
export interface Outcome {
  readonly error: CodeRunError | undefined
  readonly value?: JsonValue
  readonly stop?: boolean
  readonly cutChars?: number
}

/**
 * What the engine's report of a run's end means as the run's result: the program's completion (`finish`), a
 * failure the engine saw (`fail`), or isolated-vm losing the isolate (`catastrophe`). The reports are untrusted.
 */
export class EngineOutcomes {
  readonly #limits: CodeRunLimits
  readonly #program: PreparedProgram
  readonly #ledger: OutputLedger

  constructor(limits: CodeRunLimits, program: PreparedProgram, ledger: OutputLedger) {
    this.#limits = limits
    this.#program = program
    this.#ledger = ledger
  }

  /** The program completed (`finish`): a value goes through the ledger. */
  completed(kind: unknown, payload: unknown): Outcome {
    const text = typeof payload === 'string' ? payload : ''
    switch (kind) {
      case FinishKind.Undefined:
        return { error: undefined }
      case FinishKind.Value: {
        // A length instead of the text: the guest knew it could not fit (see `setupSource`).
        if (Number.isSafeInteger(payload) || !this.#ledger.value(text))
          return { error: { kind: 'output-limit', message: this.#ledger.describeOverflow('value') } }
        const parsed = parseProgramValue(text)
        if ('error' in parsed) return { error: parsed.error }
        return { error: undefined, value: parsed.value }
      }
      case FinishKind.InvalidValue:
        return { error: { kind: 'invalid-output', message: text } }
      case FinishKind.Error: {
        const info = parseInfo(text)
        if (info.name === 'RangeError' && isMemoryRangeError(info.message, this.#limits.memoryBytes))
          return { error: stopError('memory', this.#limits, this.#ledger) }
        return {
          error: { kind: 'exception', message: formatGuestError(info, this.#program) },
          stop: false,
          cutChars: cutCharsOf(info),
        }
      }
      default:
        return { error: { kind: 'crash', message: MALFORMED_COMPLETION }, stop: true }
    }
  }

  /** The engine ended the run itself (`fail`). */
  failed(reason: unknown, detail: unknown): Outcome {
    const text = typeof detail === 'string' ? detail : ''
    switch (reason) {
      case 'syntax':
      case 'exception':
        return { error: { kind: reason, message: formatGuestError(parseInfo(text), this.#program) } }
      case 'cpu':
      case 'memory':
        return { error: stopError(reason, this.#limits, this.#ledger) }
      default:
        return { error: { kind: 'crash', message: text || 'the engine failed' } }
    }
  }

  /** isolated-vm lost control of the isolate (`catastrophe`). */
  catastrophe(message: string): Outcome {
    if (/out.of.memory/i.test(message)) return { error: stopError('memory', this.#limits, this.#ledger), stop: false }
    return { error: { kind: 'crash', message: lostControl(message) }, stop: false }
  }
}

/** V8's longest string: 2^29 - 24 UTF-16 units, at least that many bytes. */
const MAX_STRING_BYTES = 2 ** 29 - 24

/**
 * An uncaught RangeError that means the guest wanted more memory than its budget: isolated-vm's
 * allocator refusing an ArrayBuffer past the isolate's limit, or V8 refusing a string longer than its
 * maximum (which V8 may throw before isolated-vm's soft limit stops a doubling string) when that
 * maximum is over the budget anyway.
 */
function isMemoryRangeError(message: string, memoryBytes: number): boolean {
  if (/^Array buffer allocation failed/.test(message)) return true
  return /^Invalid string length/.test(message) && memoryBytes < MAX_STRING_BYTES
}

function parseInfo(text: string): GuestErrorInfo {
  try {
    const info = JSON.parse(text) as GuestErrorInfo
    if (typeof info === 'object' && info !== null && typeof info.message === 'string') return info
  } catch {
    // fall through
  }
  return { message: UNREADABLE_ERROR }
}
