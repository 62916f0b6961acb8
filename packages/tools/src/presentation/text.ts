/**
 * The first `maxChars` UTF-16 units of `text`, one fewer when the cut would split a surrogate pair (so the
 * head stays well-formed Unicode): `text` itself when it is no longer. A head is a copy: V8's `slice` of
 * a long string is a view that keeps the whole string alive (20 heads of 256 characters kept 300 MB of
 * 15 MB texts alive in a probe), and heads are kept where their texts are not (log events, messages).
 */
export function textHead(text: string, maxChars: number): string {
  if (text.length <= maxChars) return text
  const head = text.slice(0, maxChars)
  return (/[\uD800-\uDBFF]$/.test(head) ? head.slice(0, -1) : head).split('').join('')
}
