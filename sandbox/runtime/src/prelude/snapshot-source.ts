import { MAX_VALUE_DEPTH } from './protocol.js'

/**
 * The part of the guest prelude (`GUEST_PRELUDE`) that writes a value's lossless JSON text: plain ES2020 source
 * spliced into the prelude, using its captured intrinsics and `fail`. It defines `snapshot(value, root)`: the JSON
 * text of `value`, each property read once, or a `TypeError` naming (by its path of keys from `root`) where the
 * value is not JSON.
 */
export const SNAPSHOT_SOURCE: string = `
/* ---- lossless JSON snapshot (iterative) ---- */
/* A failure names where the value failed by its path of keys, which the program chose: a key is shown by its
   first KEY_SHOWN units, a path deeper than PATH_SHOWN levels by its first and last PATH_SHOWN / 2 (else a
   5-million-character key, or a thousand long ones, made a message as long, which left the guest only to be cut). */
var KEY_SHOWN = 64, PATH_SHOWN = 32;
function shownKey(k) {
  if (k.length <= KEY_SHOWN) return k;
  var end = KEY_SHOWN, c = charCodeAtU(k, end - 1);
  if (c >= 0xd800 && c <= 0xdbff) end--;
  return sliceU(k, 0, end) + '\\u2026(' + k.length + ' characters)';
}
function where(root, stack, sp) {
  var s = root;
  for (var i = 0; i < sp; i++) {
    if (sp > PATH_SHOWN && i === PATH_SHOWN / 2) {
      s += '\\u2026(' + (sp - PATH_SHOWN) + ' levels)\\u2026';
      i = sp - PATH_SHOWN / 2 - 1;
      continue;
    }
    var f = stack[i], k = f.i - 1;
    s += f.keys === null ? '[' + k + ']' : '.' + shownKey(f.keys[k]);
  }
  return s;
}
/* The JSON text of a non-object (or null); fails for what JSON cannot hold. */
function scalarText(v, root, stack, sp) {
  if (v === null) return 'null';
  var t = typeof v;
  if (t === 'string') return stringify(v);
  if (t === 'number') {
    if (!numberIsFinite(v)) fail(where(root, stack, sp) + ' is not a finite number');
    if (v === 0 && 1 / v < 0) fail(where(root, stack, sp) + ' is -0');
    return '' + v;
  }
  if (t === 'boolean') return v ? 'true' : 'false';
  fail(where(root, stack, sp) + ' is ' + (t === 'undefined' ? 'undefined' : 'a ' + t));
}
/* Cycle checks scan the current path up to this depth; deeper, a WeakSet of the path takes over. */
var SHALLOW = 32;
/* The deepest nesting a value may leave with (MAX_VALUE_DEPTH): host code walks values recursively. */
var MAX_DEPTH = ${MAX_VALUE_DEPTH};
/* A value's JSON text, or a TypeError naming where it breaks JSON. Each property is read once, in order. */
function snapshot(value, root) {
  if (value === null || typeof value !== 'object') return scalarText(value, root, null, 0);
  var arr = isArray(value), proto = getPrototypeOf(value);
  /* As walk words it for a root (each check made once: a proxy's traps run once). */
  if (arr ? proto !== ArrayProto : proto !== ObjectProto && proto !== null) fail(root + (arr ? ' is not a plain array' : ' is not a plain object'));
  var ks = arr ? null : keys(value), len = arr ? value.length : ks.length;
  /* Most arguments, and many values, are one small container of scalars: written here in one string. The
     first value that is not such a scalar (a container, a long string, or what JSON cannot hold, which
     walk names), or the first of a longer container, hands over to walk, with the text so far and the
     container's place in it. */
  var s = arr ? '[' : '{', i, x, t;
  for (i = 0; i < len; i++) {
    if (i > 0) s += ',';
    if (arr) {
      if (!hasOwnU(value, i)) fail(root + '[' + i + '] is a hole in a sparse array');
      x = value[i];
    } else {
      s += keyText(ks[i]);
      x = value[ks[i]];
    }
    t = typeof x;
    if (len > FLAT_MAX) return walk(root, s, { src: value, keys: ks, len: len, i: i + 1 }, x);
    if (t === 'string' && x.length <= FLAT_STRING_MAX) s += stringify(x);
    else if (t === 'boolean') s += x ? 'true' : 'false';
    else if (t === 'number' && numberIsFinite(x) && (x !== 0 || 1 / x > 0)) s += '' + x;
    else if (x === null) s += 'null';
    else return walk(root, s, { src: value, keys: ks, len: len, i: i + 1 }, x);
  }
  return s + (arr ? ']' : '}');
}
/* Elements of the container snapshot writes in one string, at most: a longer one, or a string value over
   FLAT_STRING_MAX, goes to walk, which joins its pieces once (QuickJS copies a string it appends to). */
var FLAT_MAX = 64, FLAT_STRING_MAX = 1024;
/* A key's JSON text and colon, kept for up to KEY_TEXTS short keys (a program uses few). */
var KEY_TEXTS = 256, keyTexts = create(null), keyTextCount = 0;
function keyText(k) {
  var q = keyTexts[k];
  if (q === undefined) {
    q = stringify(k) + ':';
    if (keyTextCount < KEY_TEXTS && k.length <= KEY_SHOWN) { keyTexts[k] = q; keyTextCount++; }
  }
  return q;
}
/* The general walk, iterative: text is what is written so far, top the root container it belongs to (opened
   by snapshot, with the index of its next value), v the next value to write. */
function walk(root, text, top, v) {
  var seen = null, stack = nullArray(), sp = 0, out = nullArray(), n = 0, j;
  out[n++] = text;
  stack[sp++] = top;
  for (;;) {
    if (v === null || typeof v !== 'object') out[n++] = scalarText(v, root, stack, sp);
    else {
      if (sp >= MAX_DEPTH) fail(root + ' is nested more than ' + MAX_DEPTH + ' levels deep');
      if (sp < SHALLOW) { for (j = 0; j < sp; j++) if (stack[j].src === v) fail(where(root, stack, sp) + ' is a cycle'); }
      else {
        if (seen === null) { seen = new WS(); for (j = 0; j < sp; j++) wsAddU(seen, stack[j].src); }
        if (wsHasU(seen, v)) fail(where(root, stack, sp) + ' is a cycle');
      }
      var frame;
      if (isArray(v)) {
        if (getPrototypeOf(v) !== ArrayProto) fail(where(root, stack, sp) + ' is not a plain array');
        frame = { src: v, keys: null, len: v.length, i: 0 };
        out[n++] = '[';
      } else {
        var proto = getPrototypeOf(v);
        if (proto !== ObjectProto && proto !== null) fail(where(root, stack, sp) + ' is not a plain object');
        var ks = keys(v);
        frame = { src: v, keys: ks, len: ks.length, i: 0 };
        out[n++] = '{';
      }
      if (seen !== null) wsAddU(seen, v);
      stack[sp++] = frame;
    }
    /* The next value to write, closing finished containers on the way. */
    for (;;) {
      if (sp === 0) return joinU(out, '');
      var f = stack[sp - 1];
      if (f.i >= f.len) {
        out[n++] = f.keys === null ? ']' : '}';
        if (seen !== null) wsDeleteU(seen, f.src);
        stack[--sp] = undefined;
        continue;
      }
      var i = f.i++;
      if (i > 0) out[n++] = ',';
      if (f.keys === null) {
        if (!hasOwnU(f.src, i)) fail(where(root, stack, sp) + ' is a hole in a sparse array');
        v = f.src[i];
      } else {
        var k = f.keys[i];
        out[n++] = stringify(k) + ':';
        v = f.src[k];
      }
      break;
    }
  }
}`
