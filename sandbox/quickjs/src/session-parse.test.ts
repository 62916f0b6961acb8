import { expect, test } from 'vitest'
import { fixtureJson } from './fixtures/child-json.js'

/**
 * A TypeScript program is stripped (sucrase, about 4 MiB a second here) and a session program parsed whole
 * (acorn, about 0.6 s per MiB). A program up to `INLINE_STRIP_UNITS` long is stripped on the calling thread
 * (a few ms at most), a longer one on a worker thread, so the host's event loop never waits for it; a session
 * program is parsed by the engine's worker in worker isolation, and inline by the calling thread when short,
 * by the same worker thread as the stripping when long.
 */
test.each([
  ['worker', { acornHere: false, strippedHere: 2, value: 42 }],
  ['worker-long', { acornHere: false, strippedHere: 0, value: 42 }],
  ['inline', { acornHere: true, strippedHere: 2, value: 42 }],
  ['inline-long', { acornHere: false, strippedHere: 0, value: 42 }],
])(
  'who prepares session programs: %s isolation',
  (isolation, expected) => {
    expect(fixtureJson('session-parse.ts', isolation)).toEqual(expected)
  },
  90_000,
)
