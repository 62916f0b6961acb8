/**
 * Decimal normal form of a JSON number token: sign, significant digits without
 * leading or trailing zeros, and the exponent of the leading digit. Zero is `0`.
 */
function normalDecimal(token: string): string {
  const negative = token.startsWith('-')
  const body = negative ? token.slice(1) : token
  const e = body.search(/[eE]/)
  const mantissa = e === -1 ? body : body.slice(0, e)
  const exponent = e === -1 ? 0 : Number(body.slice(e + 1))
  const dot = mantissa.indexOf('.')
  const integer = dot === -1 ? mantissa : mantissa.slice(0, dot)
  const fraction = dot === -1 ? '' : mantissa.slice(dot + 1)
  let digits = integer + fraction
  let point = integer.length + exponent
  let lead = 0
  while (lead < digits.length && digits.charCodeAt(lead) === 0x30) lead++
  digits = digits.slice(lead)
  point -= lead
  let end = digits.length
  while (end > 0 && digits.charCodeAt(end - 1) === 0x30) end--
  digits = digits.slice(0, end)
  if (digits === '') return '0'
  return `${negative ? '-' : ''}0.${digits}e${point}`
}

/**
 * Whether a grammatical JSON number token denotes exactly the decimal that its
 * double prints as (the shortest round-trip form), i.e. parsing loses nothing.
 * `9007199254740993`, `1e400` and `0.10000000000000001` fail; `1.0`, `1e2`,
 * `0.1` pass. Internal.
 */
export function _isLosslessNumberToken(token: string, value: number): boolean {
  if (!Number.isFinite(value)) return false
  return normalDecimal(token) === normalDecimal(String(value))
}
