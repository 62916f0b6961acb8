/** `1234` -> `"1.2 kB"`; small values in bytes. */
export function formatBytes(bytes: number): string {
  if (bytes < 1000) return `${bytes} B`
  if (bytes < 1_000_000) return `${(bytes / 1000).toFixed(1)} kB`
  return `${(bytes / 1_000_000).toFixed(2)} MB`
}

/**
 * The text on one line (each run of newlines and the blanks around it as
 * ` ⏎ `), cut to `max` characters with an ellipsis, never inside a surrogate
 * pair. Linear in the length of `text` (no backtracking regular expression).
 */
export function oneLine(text: string, max: number): string {
  const pieces = text.split('\n').map((piece) => piece.trim())
  const first = pieces.findIndex((piece) => piece !== '')
  let flat: string
  if (first === -1) {
    flat = pieces.length > 1 ? '⏎' : ''
  } else {
    const last = pieces.findLastIndex((piece) => piece !== '')
    const middle = pieces
      .slice(first, last + 1)
      .filter((piece) => piece !== '')
      .join(' ⏎ ')
    flat = `${first > 0 ? '⏎ ' : ''}${middle}${last < pieces.length - 1 ? ' ⏎' : ''}`
  }
  if (flat.length <= max) return flat
  const cut = /[\ud800-\udbff]/.test(flat.charAt(max - 2)) ? max - 2 : max - 1
  return `${flat.slice(0, Math.max(0, cut))}…`
}

/** Milliseconds between two event times, or `?`. */
export function formatMs(ms: number | undefined): string {
  return ms === undefined ? '?' : ms < 10_000 ? `${ms} ms` : `${(ms / 1000).toFixed(1)} s`
}

/** A size limit: `1 MiB (1048576 bytes)`, or `1000 bytes` when it is no whole number of KiB/MiB. */
export function formatLimit(bytes: number): string {
  const mib = bytes / (1024 * 1024)
  const kib = bytes / 1024
  const unit = Number.isInteger(mib) ? `${mib} MiB` : Number.isInteger(kib) ? `${kib} KiB` : undefined
  return unit === undefined ? `${bytes} bytes` : `${unit} (${bytes} bytes)`
}
