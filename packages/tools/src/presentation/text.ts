/**
 * The first `maxChars` UTF-16 units of `text`, one fewer when the cut would split a surrogate pair (so the
 * head stays well-formed Unicode): `text` itself when it is no longer.
 */
export function textHead(text: string, maxChars: number): string {
  if (text.length <= maxChars) return text
  const head = text.slice(0, maxChars)
  return /[\uD800-\uDBFF]$/.test(head) ? head.slice(0, -1) : head
}
