/**
 * The part of the guest prelude (`GUEST_PRELUDE`) that answers a name that is not a bound tool:
 * plain ES2020 source spliced into the prelude, using its captured intrinsics (`create`, `freeze`,
 * `nullArray`, `stringify`, `reTestU`, `IDENT`, `charCodeAtU`, `sliceU`, `lowerU`, `rejected`) and
 * `ToolCallError`. It defines:
 * - `toolsHandler`: the frozen null-prototype Proxy handler of the guest's `tools`, whose only trap
 *   is `get`: a bound name gives its binding (one property read and a compare on the hot path), a
 *   symbol or a key generic code reads off any object (`then`, `toJSON`, `constructor`, …) gives
 *   `undefined`, any other string gives a function rejecting with `ToolCallError` code `UNKNOWN_TOOL`;
 * - `setToolNames(names)`: the bound names the messages suggest from.
 *
 * The message names the closest bound tools (edit distance with adjacent swaps, case-insensitive;
 * the best and those one edit further, at most 3), or which tools exist (at most 10 named) when none is close. Computed only when the
 * function is called; nothing in it comes from the host beyond the binding names the guest has.
 */
export const UNKNOWN_TOOL_SOURCE: string = `
/* ---- names that are not tools ---- */
var toolNames = nullArray(), MAX_SUGGESTIONS = 3, MAX_LISTED = 10, MAX_COMPARED = 64, MAX_SHOWN = 80;
function setToolNames(names) { toolNames = names; }
/* Keys generic code reads off any object (promise resolution, JSON, coercion, prototype checks):
   undefined, as on any null-prototype object, unless a tool has that name. */
function isIntrospection(k) {
  switch (k) {
    case 'then': case 'toJSON': case 'constructor': case 'prototype': case '__proto__':
    case 'toString': case 'toLocaleString': case 'valueOf': case 'hasOwnProperty': case 'isPrototypeOf':
    case 'propertyIsEnumerable': case '__defineGetter__': case '__defineSetter__': case '__lookupGetter__': case '__lookupSetter__':
      return true;
  }
  return false;
}
/* Edits (insert, delete, replace, swap two neighbours) from a to b, or max + 1 once it must exceed max. */
function distance(a, b, max) {
  var n = a.length, m = b.length, i, j;
  if (n - m > max || m - n > max) return max + 1;
  var before = null, prev = nullArray(), cur;
  for (j = 0; j <= m; j++) prev[j] = j;
  for (i = 1; i <= n; i++) {
    cur = nullArray(); cur[0] = i;
    var ca = charCodeAtU(a, i - 1), low = i;
    for (j = 1; j <= m; j++) {
      var cb = charCodeAtU(b, j - 1), d = prev[j - 1] + (ca === cb ? 0 : 1);
      if (prev[j] + 1 < d) d = prev[j] + 1;
      if (cur[j - 1] + 1 < d) d = cur[j - 1] + 1;
      if (before !== null && j > 1 && ca === charCodeAtU(b, j - 2) && cb === charCodeAtU(a, i - 2) && before[j - 2] + 1 < d) d = before[j - 2] + 1;
      cur[j] = d;
      if (d < low) low = d;
    }
    if (low > max) return max + 1;
    before = prev; prev = cur;
  }
  return prev[m];
}
/* A name as the program would write it after \`tools.\` (quoted when it is not an identifier). */
function shown(name) { return reTestU(IDENT, name) ? clip(name) : quoted(name); }
function clip(s) { return s.length > MAX_SHOWN ? sliceU(s, 0, MAX_SHOWN) + '\\u2026' : s; }
function quoted(name) { return name.length > MAX_SHOWN ? stringify(sliceU(name, 0, MAX_SHOWN)) + '\\u2026' : stringify(name); }
/* "a", "a or b", "a, b or c". */
function orList(names, n) {
  var s = '';
  for (var i = 0; i < n; i++) s += (i === 0 ? '' : i === n - 1 ? ' or ' : ', ') + shown(names[i]);
  return s;
}
function unknownMessage(name) {
  var head = 'no tool named ' + quoted(name) + '; ';
  var total = toolNames.length;
  if (total === 0) return head + 'this run has no tools';
  var close = nullArray(), dist = nullArray(), found = 0;
  if (name.length <= MAX_COMPARED) {
    var a = lowerU(name);
    for (var i = 0; i < total; i++) {
      var t = toolNames[i], longer = t.length > name.length ? t.length : name.length;
      var max = longer < 5 ? 1 : (longer * 0.4) | 0, d = distance(a, lowerU(t), max);
      if (d > max) continue;
      /* Insertion by distance; ties keep binding order. */
      var k = found++;
      while (k > 0 && dist[k - 1] > d) { close[k] = close[k - 1]; dist[k] = dist[k - 1]; k--; }
      close[k] = t; dist[k] = d;
    }
  }
  if (found > 0) {
    /* The best, and those at most one edit further. */
    var n = 1;
    while (n < found && n < MAX_SUGGESTIONS && dist[n] <= dist[0] + 1) n++;
    return head + 'did you mean ' + orList(close, n) + '?';
  }
  if (total === 1) return head + 'the only tool is ' + shown(toolNames[0]);
  var listed = total < MAX_LISTED ? total : MAX_LISTED, list = '';
  for (var j = 0; j < listed; j++) list += (j === 0 ? '' : ', ') + shown(toolNames[j]);
  return head + 'the tools are ' + list + (total > listed ? ' and ' + (total - listed) + ' more' : '');
}
function unknownTool(name) {
  return freeze(({ [name]() { return rejected(new ToolCallError(name, unknownMessage(name), 'UNKNOWN_TOOL')); } })[name]);
}
var toolsHandler = create(null);
toolsHandler.get = function (target, key) {
  var v = target[key];
  return v !== undefined || typeof key !== 'string' || isIntrospection(key) ? v : unknownTool(key);
};
freeze(toolsHandler);
`
