import { expect, test } from 'vitest'
import { fixtureJson } from './fixtures/child-json.js'

/**
 * A session program is parsed whole (acorn, about 0.6 s per MiB here): in worker isolation the
 * engine's worker does it, so the host's event loop never waits for it; inline, the calling thread
 * does for a short program, and a worker thread of its own for one longer than `INLINE_STRIP_UNITS`.
 */
test.each([
  ['worker', { acornHere: false, value: 42 }],
  ['inline', { acornHere: true, value: 42 }],
  ['inline-long', { acornHere: false, value: 42 }],
])('who parses session programs: %s isolation', (isolation, expected) => {
  expect(fixtureJson('session-parse.ts', isolation)).toEqual(expected)
}, 90_000)
