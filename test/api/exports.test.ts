/**
 * The public export list of every package entry is pinned in `exports.json`: a name that appears or
 * disappears is an API change and shows up here, in review, instead of by accident. After a deliberate
 * change, update the file (the failure prints the new list).
 */
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { expect, test } from 'vitest'
import { ROOT } from '../../scripts/build-js.js'
import { exportedNames } from './public-exports.js'

const pinned = JSON.parse(readFileSync(join(ROOT, 'test/api/exports.json'), 'utf8')) as Record<string, string[]>
const actual = exportedNames(ROOT)

test('every package entry exports exactly its pinned names', () => {
  expect(Object.keys(actual), 'package entries').toEqual(Object.keys(pinned))
  for (const [entry, names] of Object.entries(actual)) {
    expect(
      names,
      `${entry}: the export list changed; if that is deliberate, write this list into test/api/exports.json`,
    ).toEqual(pinned[entry])
  }
}, 60_000)

test('the sandbox seam shows a harness its small face; the backend kit and the unsafe JSON adoption are elsewhere', () => {
  expect(actual['@ptc/sandbox']?.length).toBeLessThanOrEqual(15)
  for (const internal of [
    'settleHostCall',
    'GUEST_PRELUDE',
    'parseQueuedCalls',
    'FinishKind',
    'wrapProgram',
    'OutputLedger',
    'acceptRun',
  ]) {
    expect(actual['@ptc/sandbox']).not.toContain(internal)
    expect(actual['@ptc/sandbox/backend']).toContain(internal)
  }
  expect(actual['@ptc/tools']).not.toContain('adoptParsedJson')
  expect(actual['@ptc/tools/executor']).toContain('adoptParsedJson')
  for (const entry of Object.values(actual)) expect(entry).not.toContain('isParsedArguments')
})
