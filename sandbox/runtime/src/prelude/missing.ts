/**
 * What a program is told when it reaches for what the sandbox does not have (models write Node.js and browser
 * code by habit): the messages read together here, each naming what to use instead.
 */

/** The failure of a program with an `import` statement (made by `stripTypeScript`, before the program runs). */
export const IMPORT_MESSAGE =
  'programs cannot import modules; every tool is already an async function on `tools` (`await tools.name(args)`), ' +
  'and the ECMAScript built-ins (JSON, Math, Date, Intl, …) are globals'

const TIMERS =
  'there are no timers in the sandbox; await the tool calls themselves (`Promise.all` runs several at once)'

/**
 * Globals a program may expect and the sandbox does not have, with what to use instead: the prelude adds the hint
 * to the message of an uncaught `ReferenceError` naming one (`require is not defined: …`). The globals stay absent,
 * so `typeof fetch` is still `'undefined'`.
 */
export const MISSING_GLOBAL_HINTS: Readonly<Record<string, string>> = Object.freeze({
  require: 'programs cannot load modules; every tool is an async function on `tools` (`await tools.name(args)`)',
  module: 'programs are not modules; give the answer with `return`',
  exports: 'programs are not modules; give the answer with `return`',
  fetch: 'there is no network in the sandbox; reach services through the tools on `tools`',
  XMLHttpRequest: 'there is no network in the sandbox; reach services through the tools on `tools`',
  process:
    'there is no process in the sandbox (no env, argv or exit); input comes from `tools`, ' +
    'output is `console.log` and `return`',
  Buffer: 'there is no Buffer in the sandbox; use strings, arrays and typed arrays (`Uint8Array`)',
  setTimeout: TIMERS,
  setInterval: TIMERS,
  setImmediate: TIMERS,
  clearTimeout: TIMERS,
  clearInterval: TIMERS,
})
