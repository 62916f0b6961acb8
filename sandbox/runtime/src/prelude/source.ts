import { ERROR_CHARS_PER_OUTPUT_BYTE, ERROR_CHARS_SLACK, GUEST_GLOBALS, GUEST_LOG_LEVELS } from './protocol.js'
import { MISSING_GLOBAL_HINTS } from './missing.js'
import { FORMAT_SOURCE } from './format-source.js'
import { SNAPSHOT_SOURCE } from './snapshot-source.js'
import { UNKNOWN_TOOL_SOURCE } from './unknown-tool.js'

/**
 * The guest prelude: a JavaScript expression evaluating to `function (host, bindingsJson, queueJson)`;
 * see `protocol.ts` for the contract. Evaluating it — once per engine, before any program — captures
 * every intrinsic it uses, installs `tools`, `ToolCallError` and `console` and deletes every global
 * not in `GUEST_GLOBALS`; the function it yields is called once per run and returns `{ start, settle }`
 * (and `takeCalls` in queue mode); called with `bindingsJson` null (a suspended run whose memory was
 * restored), it returns the run in progress's `{ settle, takeCalls, program }`, or null. So a program of a
 * session, which runs on what earlier programs left, still finds the prelude's intrinsics and globals as they
 * were. Plain ES2020, no engine-specific API: both backends evaluate it as is. Its parts that stand alone are
 * spliced in: `snapshot-source.ts`, `format-source.ts`, `unknown-tool.ts`.
 *
 * Hardening notes: internal arrays and objects have a null prototype (no inherited setters or
 * `toJSON`); snapshots read each property exactly once and write the JSON text themselves (a
 * captured `JSON.stringify` only quotes strings: QuickJS's object path uses internal arrays that
 * an index setter on `Array.prototype` sees); the traversal is iterative; tool functions are plain
 * functions returning a promise made by the captured `Promise` (no `then` lookup on our side);
 * `tools` (a getter of the current run's) is a Proxy whose handler (see `unknown-tool.ts`) has a `get` trap only
 * and a null prototype (a handler inheriting from `Object.prototype` would take traps a program put there).
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
${SNAPSHOT_SOURCE}
${FORMAT_SOURCE}

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
