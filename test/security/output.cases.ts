/**
 * Exact output-ledger cases (SPEC section 9: one ledger, exact to the UTF-8 byte; every log entry costs
 * its text plus a 1-byte separator; a lone surrogate is U+FFFD, 3 bytes). Each budget is either exactly
 * enough or one byte short, so a backend that charges anything else fails. Every backend must give
 * exactly these results (hostile suite and output-parity.test.ts).
 */
import type { CodeRunFailureKind, JsonValue } from '@ptc/sandbox'

export interface OutputCase {
  readonly code: string
  readonly maxOutputBytes: number
  readonly kind: CodeRunFailureKind | undefined
  readonly logs: readonly string[]
  readonly value: JsonValue | undefined
}

const R = '\uFFFD'

export const OUTPUT_CASES: readonly OutputCase[] = [
  // A lone high surrogate: 3 + 1 bytes.
  { code: 'console.log("\\uD800")', maxOutputBytes: 4, kind: undefined, logs: [R], value: undefined },
  { code: 'console.log("\\uD800")', maxOutputBytes: 3, kind: 'output-limit', logs: [], value: undefined },
  // A lone low surrogate between ASCII: 1 + 3 + 1 + 1 bytes.
  { code: 'console.log("a\\uDC00b")', maxOutputBytes: 6, kind: undefined, logs: [`a${R}b`], value: undefined },
  { code: 'console.log("a\\uDC00b")', maxOutputBytes: 5, kind: 'output-limit', logs: [], value: undefined },
  // Two entries: the first that fits is kept.
  {
    code: 'console.log("\\uD800")\nconsole.log("\\uDBFF")',
    maxOutputBytes: 8,
    kind: undefined,
    logs: [R, R],
    value: undefined,
  },
  {
    code: 'console.log("\\uD800")\nconsole.log("\\uDBFF")',
    maxOutputBytes: 7,
    kind: 'output-limit',
    logs: [R],
    value: undefined,
  },
  // A valid pair is one 4-byte character, not two replacements.
  { code: 'console.log("\\uD83D\\uDE00")', maxOutputBytes: 5, kind: undefined, logs: ['\u{1F600}'], value: undefined },
  { code: 'console.log("\\uD83D\\uDE00")', maxOutputBytes: 4, kind: 'output-limit', logs: [], value: undefined },
  // Empty entries cost their separator.
  {
    code: 'console.log()\nconsole.log()\nconsole.log()',
    maxOutputBytes: 3,
    kind: undefined,
    logs: ['', '', ''],
    value: undefined,
  },
  {
    code: 'console.log()\nconsole.log()\nconsole.log()',
    maxOutputBytes: 2,
    kind: 'output-limit',
    logs: ['', ''],
    value: undefined,
  },
  // The value shares the ledger: its JSON text "é" is 4 bytes, after a 2-byte log.
  { code: 'console.log("a")\nreturn "é"', maxOutputBytes: 6, kind: undefined, logs: ['a'], value: 'é' },
  { code: 'console.log("a")\nreturn "é"', maxOutputBytes: 5, kind: 'output-limit', logs: ['a'], value: undefined },
]
