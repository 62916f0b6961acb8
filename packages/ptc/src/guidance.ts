/** Model-facing text of the PTC executor: what the SDK section says before the declarations. */

/** The prompt guidance that precedes the declarations. */
export const SDK_GUIDANCE = [
  'Call `run_code` with a short program to use tools. The program is the body of an async function (TypeScript or ' +
    'JavaScript):',
  'use `await` and `return` at top level; every tool is `await tools.<name>(args)` (or `tools["name"](args)`), ' +
    'returning the typed value below.',
  'Run independent concurrency-safe calls together with `Promise.all`. A failed call throws a `ToolCallError` you ' +
    'can catch.',
  'Only what you print with `console.log` or `return` comes back to you; intermediate tool results stay in the sandbox.',
  'There is no `import`, `require`, `setTimeout`, `fetch` or `process`: only the ECMAScript built-ins and `tools`.',
].join('\n')
