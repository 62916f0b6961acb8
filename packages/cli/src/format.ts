/** `1234` -> `"1.2 kB"`; small values in bytes. */
export function formatBytes(bytes: number): string {
  if (bytes < 1000) return `${bytes} B`
  if (bytes < 1_000_000) return `${(bytes / 1000).toFixed(1)} kB`
  return `${(bytes / 1_000_000).toFixed(2)} MB`
}

/** The text on one line (newlines as ` ⏎ `), cut to `max` characters with an ellipsis. */
export function oneLine(text: string, max: number): string {
  const flat = text.replace(/\s*\n\s*/g, ' ⏎ ').trim()
  return flat.length <= max ? flat : `${flat.slice(0, max - 1)}…`
}

/** Milliseconds between two event times, or `?`. */
export function formatMs(ms: number | undefined): string {
  return ms === undefined ? '?' : ms < 10_000 ? `${ms} ms` : `${(ms / 1000).toFixed(1)} s`
}
