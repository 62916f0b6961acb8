import { expect, test } from 'vitest'
import { fixtureJson } from './fixtures/child-json.js'

/**
 * A session program is parsed whole (acorn, about 0.3-0.5 s per MiB here): in worker isolation the
 * engine's worker does it, so the host's event loop never waits for it; inline, the calling thread does.
 */
test.each([
  ['worker', { acornHere: false, value: 42 }],
  ['inline', { acornHere: true, value: 42 }],
])('who parses session programs: %s isolation', (isolation, expected) => {
  expect(fixtureJson('session-parse.ts', isolation)).toEqual(expected)
}, 90_000)
