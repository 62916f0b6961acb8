import { prettyJson, type JsonValue } from '@ptc/tools'

/** The text the model gets for a completed run: the logs, then the value, or a fixed marker. */
export function renderRunText(logs: readonly string[], result: JsonValue | undefined): string {
  const parts = [...logs]
  if (result !== undefined) parts.push(typeof result === 'string' ? result : prettyJson(result))
  return parts.length === 0 ? '(run_code completed with no output)' : parts.join('\n')
}
