import { transform } from 'sucrase'

/** Result of stripping TypeScript types from a program body. */
export type StripResult =
  | { ok: true; code: string }
  | { ok: false; message: string; line: number; column: number }

/**
 * Removes erasable TypeScript syntax with sucrase (`transforms: ['typescript']`, no ES transforms).
 * Chosen by measurement (20-line program, warm, this machine): sucrase 0.10 ms vs ts-blank-space
 * 0.15 ms; cold import 50 ms vs 630 ms (ts-blank-space loads `typescript`, 23 MB, vs 1.7 MB). Sucrase
 * keeps every line where it was; columns shift where types were removed, and `mapStrippedColumn`
 * maps them back. Syntax errors come back with the line and column (1-based) of the model's code.
 */
export function stripTypeScript(code: string): StripResult {
  try {
    const out = transform(code, { transforms: ['typescript'], disableESTransforms: true })
    return { ok: true, code: out.code }
  } catch (error) {
    const loc = (error as { loc?: { line?: unknown; column?: unknown } }).loc
    const message = error instanceof Error ? error.message : String(error)
    const line = typeof loc?.line === 'number' ? loc.line : 1
    const column = typeof loc?.column === 'number' ? loc.column + 1 : 1
    return { ok: false, message: message.replace(/\s*\(\d+:\d+\)\s*$/, ''), line, column }
  }
}

/**
 * Maps a 1-based column of a stripped line back to the original line. Stripping only deletes text
 * from a line, so the stripped line is (almost always) a subsequence of the original: walk both
 * greedily. Falls back to the column unchanged when the lines do not align.
 */
export function mapStrippedColumn(original: string, stripped: string, column: number): number {
  const target = Math.min(Math.max(column - 1, 0), stripped.length)
  let i = 0
  for (let j = 0; j < target; j++) {
    const ch = stripped[j]
    while (i < original.length && original[i] !== ch) i++
    if (i >= original.length) return column
    i++
  }
  // Skip deleted text up to the character the column points at.
  const ch = stripped[target]
  if (ch !== undefined && ch !== ' ') {
    while (i < original.length && original[i] !== ch) i++
    if (i >= original.length) return column
  }
  return i + 1
}
