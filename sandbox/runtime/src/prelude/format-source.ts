/**
 * The part of the guest prelude (`GUEST_PRELUDE`) that formats `console` arguments as text, bounded in depth (3
 * levels) and size (100 entries a level): plain ES2020 source spliced into the prelude, using its captured
 * intrinsics. It defines `format(args)`.
 */
export const FORMAT_SOURCE: string = `
/* ---- console formatting (depth- and size-bounded) ---- */
function isError(v) {
  var p = v;
  for (var n = 0; n < 64 && p !== null; n++) { p = getPrototypeOf(p); if (p === ErrorProto) return true; }
  return false;
}
function fmt(v, depth, top) {
  var t = typeof v;
  if (t === 'string') return top ? v : stringify(v);
  if (t === 'number') return is(v, -0) ? '-0' : numberToStringU(v);
  if (t === 'bigint') return bigintToStringU(v) + 'n';
  if (t === 'boolean' || t === 'undefined') return '' + v;
  if (t === 'symbol') return symbolToStringU(v);
  if (v === null) return 'null';
  if (t === 'function') {
    var d = getOwnPropertyDescriptor(v, 'name');
    return '[Function' + (d && typeof d.value === 'string' && d.value ? ': ' + d.value : '') + ']';
  }
  if (isError(v)) {
    var name = v.name, message = v.message;
    return (typeof name === 'string' ? name : 'Error') + (typeof message === 'string' && message ? ': ' + message : '');
  }
  if (depth > 3) return isArray(v) ? '[Array]' : '[Object]';
  var parts = nullArray(), n = 0, arr = isArray(v), ks = arr ? null : keys(v);
  var len = arr ? v.length : ks.length, max = len > 100 ? 100 : len;
  for (var i = 0; i < max; i++) {
    var key = arr ? i : ks[i], desc = getOwnPropertyDescriptor(v, key);
    var s = desc === undefined ? (arr ? '<empty>' : 'undefined') : 'value' in desc ? fmt(desc.value, depth + 1, false) : '[Getter]';
    parts[n++] = arr ? s : (reTestU(IDENT, key) ? key : stringify(key)) + ': ' + s;
  }
  if (len > max) parts[n++] = '... ' + (len - max) + ' more';
  var body = '';
  for (var j = 0; j < n; j++) body += (j ? ', ' : '') + parts[j];
  return arr ? (n ? '[ ' + body + ' ]' : '[]') : (n ? '{ ' + body + ' }' : '{}');
}
function format(args) {
  var out = '';
  for (var i = 0; i < args.length; i++) {
    var s;
    try { s = fmt(args[i], 0, true); } catch (_) { s = '[unformattable value]'; }
    out += (i ? ' ' : '') + s;
  }
  return out;
}`
