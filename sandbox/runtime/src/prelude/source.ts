import {
  ERROR_CHARS_PER_OUTPUT_BYTE,
  ERROR_CHARS_SLACK,
  GUEST_GLOBALS,
  GUEST_LOG_LEVELS,
  MAX_VALUE_DEPTH,
} from './protocol.js'
import { MISSING_GLOBAL_HINTS } from './missing.js'
import { UNKNOWN_TOOL_SOURCE } from './unknown-tool.js'

/**
 * The guest prelude: a JavaScript expression evaluating to `function (host, bindingsJson, queueJson)`;
 * see `protocol.ts` for the contract. Evaluating it — once per engine, before any program — captures
 * every intrinsic it uses, installs `tools`, `ToolCallError` and `console` and deletes every global
 * not in `GUEST_GLOBALS`; the function it yields is called once per run and returns `{ start, settle }`
 * (and `takeCalls` in queue mode); called with `bindingsJson` null (a suspended run whose memory was
 * restored), it returns the run in progress's `{ settle, takeCalls, program }`, or null. So a program of a session, which runs on what earlier programs left,
 * still finds the prelude's intrinsics and globals as they were. Plain ES2020, no engine-specific
 * API: both backends evaluate it as is.
 *
 * Hardening notes: internal arrays and objects have a null prototype (no inherited setters or
 * `toJSON`); snapshots read each property exactly once and write the JSON text themselves (a
 * captured `JSON.stringify` only quotes strings: QuickJS's object path uses internal arrays that
 * an index setter on `Array.prototype` sees); the traversal is iterative; tool functions are plain
 * functions returning a promise made by the captured `Promise` (no `then` lookup on our side);
 * `tools` (a getter of the current run's) is a Proxy whose handler (see `unknown-tool.ts`) has a `get` trap only and a null prototype
 * (a handler inheriting from `Object.prototype` would take traps a program put there).
 */
export const GUEST_PRELUDE: string = `(function () {
'use strict';
var G = globalThis, O = Object, R = Reflect;
var apply = R.apply, ownKeys = R.ownKeys, defineProperty = O.defineProperty, freeze = O.freeze,
  create = O.create, getPrototypeOf = O.getPrototypeOf, setPrototypeOf = O.setPrototypeOf, keys = O.keys,
  is = O.is, getOwnPropertyDescriptor = O.getOwnPropertyDescriptor, isArray = Array.isArray,
  hasOwn = O.prototype.hasOwnProperty, ObjectProto = O.prototype, ArrayProto = Array.prototype,
  ErrorProto = Error.prototype, FunctionProto = Function.prototype,
  stringify = JSON.stringify, parse = JSON.parse, P = Promise, then = P.prototype.then,
  WS = WeakSet, wsHas = WS.prototype.has, wsAdd = WS.prototype.add, wsDelete = WS.prototype.delete,
  numberIsFinite = Number.isFinite, Str = String, ErrorC = Error, TypeErrorC = TypeError, ProxyC = Proxy,
  symbolToString = Symbol.prototype.toString, bigintToString = BigInt.prototype.toString,
  numberToString = Number.prototype.toString, reTest = RegExp.prototype.test, IDENT = /^[A-Za-z_$][\\w$]*$/,
  OOM_PROTO = typeof InternalError === 'function' ? InternalError.prototype : null,
  OOM_TEXT = '{"name":"InternalError","message":"out of memory"}', UNFORMATTABLE = '{"message":"[unformattable thrown value]"}';
/* Uncurried methods: no argument arrays (an index setter on Array.prototype would see them). */
var bindCall = FunctionProto.call.bind.bind(FunctionProto.call);
var wsHasU = bindCall(wsHas), wsAddU = bindCall(wsAdd), wsDeleteU = bindCall(wsDelete), hasOwnU = bindCall(hasOwn),
  thenU = bindCall(then), reTestU = bindCall(reTest), symbolToStringU = bindCall(symbolToString),
  bigintToStringU = bindCall(bigintToString), numberToStringU = bindCall(numberToString), joinU = bindCall(ArrayProto.join),
  charCodeAtU = bindCall(Str.prototype.charCodeAt), sliceU = bindCall(Str.prototype.slice), lowerU = bindCall(Str.prototype.toLowerCase);
/* A lone surrogate: each backend would encode it differently (QuickJS as three U+FFFD); logs carry U+FFFD instead.
   The engines' own isWellFormed/toWellFormed (ES2024) where they exist: a regex test of a 10 MB log costs
   QuickJS over a second, the built-in 60 ms. The fallback pattern has its own exec, so a guest replacing
   RegExp.prototype.exec cannot hide one. */
var nativeIsWF = Str.prototype.isWellFormed, nativeToWF = Str.prototype.toWellFormed;
var isWellFormedU = typeof nativeIsWF === 'function' && typeof nativeToWF === 'function' ? bindCall(nativeIsWF) : null,
  toWellFormedU = isWellFormedU === null ? null : bindCall(nativeToWF);
var LONE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
defineProperty(LONE, 'exec', { value: RegExp.prototype.exec, writable: false, configurable: false });
var ALLOWED = ${JSON.stringify(GUEST_GLOBALS)};
var HINTS = ${JSON.stringify(MISSING_GLOBAL_HINTS)}, UNDEFINED_SUFFIX = ' is not defined';
var LEVELS = ${JSON.stringify(GUEST_LOG_LEVELS)};
function nullArray() { return setPrototypeOf([], null); }
function msgOf(e) { try { var m = e && e.message; return typeof m === 'string' ? m : Str(e); } catch (_) { return 'unknown error'; } }
function fail(msg) { throw new TypeErrorC(msg); }
/* The text with every lone surrogate replaced by U+FFFD (the common case, none, costs one regex test). */
function wellFormed(s) {
  if (isWellFormedU !== null) return isWellFormedU(s) ? s : toWellFormedU(s);
  if (!reTestU(LONE, s)) return s;
  var parts = nullArray(), np = 0, start = 0, n = s.length;
  for (var i = 0; i < n; i++) {
    var c = charCodeAtU(s, i);
    if (c < 0xd800 || c > 0xdfff) continue;
    if (c <= 0xdbff && i + 1 < n) { var d = charCodeAtU(s, i + 1); if (d >= 0xdc00 && d <= 0xdfff) { i++; continue; } }
    parts[np++] = sliceU(s, start, i); parts[np++] = '\\ufffd'; start = i + 1;
  }
  parts[np++] = sliceU(s, start, n);
  return joinU(parts, '');
}

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
}

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
}

/* ---- ToolCallError ---- */
/* A data property from a null-prototype descriptor: this runs after the program started, when a literal
   descriptor would inherit \`get\` or \`set\` a program put on Object.prototype. \`name\` is the one
   writable, configurable and hidden field; the others are fixed and enumerable. */
function own(o, key, value, isName) {
  var d = create(null);
  d.value = value; d.writable = isName; d.enumerable = !isName; d.configurable = isName;
  defineProperty(o, key, d);
}
class ToolCallError extends ErrorC {
  constructor(toolName, message, code, details) {
    super(Str(message));
    own(this, 'name', 'ToolCallError', true);
    own(this, 'toolName', Str(toolName), false);
    own(this, 'code', code === undefined ? 'TOOL_ERROR' : Str(code), false);
    if (details !== undefined) own(this, 'details', details, false);
  }
}
freeze(ToolCallError.prototype);
freeze(ToolCallError);

/* ---- sub-calls ---- */
/* The run in progress, set by the per-run function returned below: its host functions, sub-call table,
   queue and caps. Tool functions and console reach the host only through it, so in a session a
   function kept from an earlier program acts in the current run, and nothing reaches a finished one. */
var cur = null;
/* The current run's api and its program's promise, for a suspended run's resumption. Kept here, not on the run
   record: the api's functions and the promise's reactions hold the record, so a record holding them back would be
   a cycle, freed only by QuickJS's cycle collector (a session's memory grew by a run record per program). */
var curApi = null, curProgram;
function rejected(err) { return new P(function (_, reject) { reject(err); }); }
/* The one executor of every sub-call's promise (no closure made per call): its resolving functions, taken at once. */
var nextResolve = null, nextReject = null;
function takeResolvers(resolve, reject) { nextResolve = resolve; nextReject = reject; }
/* Queue mode (the host gave no call function): calls wait in \`r.queue\` until the host takes them after
   running jobs, and the sub-call caps the host would apply on each call are applied here, so a
   synchronous flood of calls stops at once. */
function callTool(name, args) {
  var r = cur;
  if (r === null || r.closed) return rejected(new ToolCallError(name, 'the run has ended', 'ABORTED'));
  var index = r.index[name];
  if (index === undefined) return rejected(new ToolCallError(name, unknownMessage(name), 'UNKNOWN_TOOL'));
  var json;
  try { json = snapshot(args, 'arguments'); }
  catch (e) { return rejected(new ToolCallError(name, 'arguments are not lossless JSON: ' + msgOf(e), 'INVALID_ARGS')); }
  var id = ++r.nextId, p = new P(takeResolvers), entry = { resolve: nextResolve, reject: nextReject, name: name };
  nextResolve = nextReject = null;
  r.pending[id] = entry;
  if (r.queue === null) { r.hostCall(id, name, json); return p; }
  if (id > r.maxCalls) r.hostLimit(1); else if (r.open >= r.maxOpen) r.hostLimit(2);
  r.open++;
  r.queue[r.queue.length] = id + ',' + index + ',' + json;
  if (r.queue.length >= r.handOverEvery) {
    var q = r.queue;
    r.queue = nullArray();
    r.hostQueued(joinU(q, '\\u0001'));
  }
  return p;
}
function makeTool(name) {
  var holder = create(null);
  holder[name] = ({ [name](args) { return callTool(name, arguments.length === 0 ? {} : args); } })[name];
  return freeze(holder[name]);
}
${UNKNOWN_TOOL_SOURCE}

/* ---- console ---- */
var consoleObj = create(ObjectProto);
for (var l = 0; l < LEVELS.length; l++) {
  (function (level) {
    var f = ({ [level]() { var r = cur; if (r !== null && !r.closed) r.hostLog(level, wellFormed(format(arguments))); } })[level];
    defineProperty(consoleObj, level, { value: freeze(f), enumerable: true });
  })(LEVELS[l]);
}
freeze(consoleObj);

/* ---- globals ---- */
var names = ownKeys(G);
for (var g = 0; g < names.length; g++) {
  var gname = names[g];
  if (typeof gname !== 'string' || ALLOWED.indexOf(gname) === -1) { try { delete G[gname]; } catch (_) {} }
}
/* \`tools\` is the current run's: a getter, fixed like the other two. */
function currentTools() { return cur === null ? undefined : cur.tools; }
defineProperty(G, 'tools', { get: currentTools, enumerable: false, configurable: false });
defineProperty(G, 'ToolCallError', { value: ToolCallError, writable: false, enumerable: false, configurable: false });
defineProperty(G, 'console', { value: consoleObj, writable: false, enumerable: false, configurable: false });

/* ---- lifecycle ---- */
/* A ReferenceError's message ("require is not defined", QuickJS "'require' is not defined") with what to use
   instead, when it names a global of MISSING_GLOBAL_HINTS. */
function withHint(message) {
  var n = message.length - UNDEFINED_SUFFIX.length;
  if (n <= 0 || sliceU(message, n) !== UNDEFINED_SUFFIX) return message;
  var id = sliceU(message, 0, n);
  var quoted = id.length > 2 && charCodeAtU(id, 0) === 39 && charCodeAtU(id, id.length - 1) === 39;
  if (quoted) id = sliceU(id, 1, id.length - 1);
  return hasOwnU(HINTS, id) ? message + ': ' + HINTS[id] : message;
}
/* The tail of a stack kept beside its head when the stack is cut: V8's stack repeats the message before its frames. */
var STACK_TAIL_UNITS = 8192;
function describe(e, maxChars) {
  /* Built by hand: QuickJS's JSON.stringify of objects uses internal arrays an index setter sees. A message
     longer than maxChars keeps its head, and "cutChars" says how much went: the host shows no more of it. */
  try {
    var message, name, stack, more = '';
    if (e !== null && (typeof e === 'object' || typeof e === 'function') && isError(e)) {
      name = e.name; message = e.message; stack = e.stack;
      if (typeof message !== 'string') message = '';
      else if (name === 'ReferenceError') message = withHint(message);
      if (typeof stack === 'string' && stack.length > maxChars + STACK_TAIL_UNITS) {
        stack = sliceU(stack, 0, maxChars) + '\\n' + sliceU(stack, stack.length - STACK_TAIL_UNITS);
      }
      more = ',"name":' + stringify(typeof name === 'string' ? name : 'Error') + (typeof stack === 'string' ? ',"stack":' + stringify(stack) : '');
    } else message = fmt(e, 0, false);
    if (message.length > maxChars) {
      more += ',"cutChars":' + (message.length - maxChars);
      message = sliceU(message, 0, maxChars);
    }
    return '{"message":' + stringify(message) + more + '}';
  } catch (_) { return UNFORMATTABLE; }
}
/* QuickJS's out-of-memory error, recognised without allocating (describing it may need memory there is none of). */
function isOutOfMemory(e) {
  return OOM_PROTO !== null && e !== null && typeof e === 'object' && getPrototypeOf(e) === OOM_PROTO && e.message === 'out of memory';
}

/* ---- one run ---- */
return function (host, bindingsJson, queueJson, maxOutputBytes) {
  /* A resumed run (its memory restored): the api of the run in progress and its program's promise. */
  if (bindingsJson === null) {
    if (cur === null || cur.closed || curApi === null) return null;
    var again = create(null);
    again.settle = curApi.settle; again.takeCalls = curApi.takeCalls; again.program = curProgram;
    return freeze(again);
  }
  /* A run of the same session that never settled (stopped while it waited) is over. */
  if (cur !== null) cur.closed = true;
  var r = create(null);
  r.hostCall = host.call; r.hostLog = host.log; r.hostFinish = host.finish; r.hostLimit = host.limit;
  /* A thrown message past this can never be shown (the host cuts a failure to maxOutputBytes UTF-8 bytes, at
     least one a unit; twice, as mapping positions shortens it): it is cut here, before it leaves the guest. */
  r.maxErrorChars = typeof maxOutputBytes === 'number' ? ${ERROR_CHARS_PER_OUTPUT_BYTE} * maxOutputBytes + ${ERROR_CHARS_SLACK} : 1 / 0;
  r.closed = false; r.nextId = 0; r.pending = create(null); r.queue = null; r.open = 0; r.maxCalls = 0; r.maxOpen = 0;
  r.hostQueued = host.queued; r.handOverEvery = 1 / 0;
  curApi = null; curProgram = undefined;
  if (typeof r.hostCall !== 'function') {
    var caps = parse(queueJson);
    r.maxCalls = caps.maxSubCalls; r.maxOpen = caps.maxPendingSubCalls; r.queue = nullArray();
    if (typeof r.hostQueued === 'function' && caps.handOverEvery > 0) r.handOverEvery = caps.handOverEvery;
  }
  /* The frozen null-prototype bindings, behind the proxy of \`toolsHandler\`: a misspelled name rejects with UNKNOWN_TOOL. */
  var bound = create(null), index = create(null), bindings = parse(bindingsJson);
  for (var b = 0; b < bindings.length; b++) {
    defineProperty(bound, bindings[b], { value: makeTool(bindings[b]), enumerable: true, writable: false, configurable: false });
    index[bindings[b]] = b;
  }
  freeze(bound);
  setToolNames(bindings);
  r.index = index;
  r.tools = new ProxyC(bound, toolsHandler);
  cur = r;

  function onValue(v) {
    if (r.closed) return;
    r.closed = true;
    if (v === undefined) { r.hostFinish(0, ''); return; }
    var json;
    try { json = snapshot(v, 'the return value'); } catch (e) { r.hostFinish(2, msgOf(e)); return; }
    r.hostFinish(1, json);
  }
  function onError(e) {
    if (r.closed) return;
    r.closed = true;
    var d;
    try { d = isOutOfMemory(e) ? OOM_TEXT : describe(e, r.maxErrorChars); } catch (_) { d = UNFORMATTABLE; }
    r.hostFinish(3, d);
  }
  /* Runs the program with \`this\` the global object (as a script's top level) and returns its promise:
     a host that sees it settle without a finish (the engine could not queue the reaction job, out of
     memory) reads the outcome from it. */
  function start(fn) {
    var p;
    try { p = apply(fn, G, nullArray()); } catch (e) { onError(e); return; }
    thenU(p, onValue, onError);
    curProgram = p;
    return p;
  }
  function settle(batchJson) {
    var batch = parse(batchJson);
    for (var i = 0; i < batch.length; i++) {
      var e = batch[i], id = e[0], p = r.pending[id];
      if (p === undefined) continue;
      delete r.pending[id];
      r.open--;
      /* Read past the end only when present: a missing index would be looked up on Array.prototype. */
      if (e[1] === 1) p.resolve(e[2]);
      else p.reject(new ToolCallError(p.name, e[2], e.length > 3 ? e[3] : undefined, e.length > 4 ? e[4] : undefined));
    }
  }
  /* Queue mode: the calls made since the last takeCalls(), as "id,bindingIndex,argsJson" joined by U+0001
     (lossless JSON text never holds a raw control character); '' when there are none. */
  function takeCalls() {
    if (r.queue.length === 0) return '';
    var q = r.queue;
    r.queue = nullArray();
    return joinU(q, '\\u0001');
  }
  var api = create(null);
  api.start = start;
  api.settle = settle;
  if (r.queue !== null) api.takeCalls = takeCalls;
  curApi = freeze(api);
  return curApi;
};
})()`
