import { expect, test } from 'vitest'
import { fixtureJson } from './fixtures/child-json.js'

/** Loading sucrase blocks a thread for 35-50 ms: only a process that strips a program pays for it, and a prewarmed runtime loads it before the first run. */
test.each([
  ['prewarm', { afterImport: false, afterCreate: true, afterRun: true, value: 42 }],
  ['no-prewarm', { afterImport: false, afterCreate: false, afterRun: true, value: 42 }],
])(
  'importing the package does not load the TypeScript stripper; %s',
  (mode, expected) => {
    expect(fixtureJson('stripper-load.ts', mode)).toEqual(expected)
  },
  90_000,
)
