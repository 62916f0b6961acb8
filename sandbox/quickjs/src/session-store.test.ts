import { expect, test } from 'vitest'
import { fixtureJson } from './fixtures/child-json.js'

/**
 * A session store that stops answering must not hang a run, `endSession` or `dispose()`, nor let the
 * process exit under a pending run: the fixture awaits everything at its top level and must end on its own.
 */
test.each(['inline', 'worker'])(
  'a stalled session store: the run answers at its wall, endSession and dispose() give up on it, saves that never end hold at most maxSessions states (%s)',
  (isolation) => {
    expect(fixtureJson('stalled-store.ts', isolation)).toEqual({
      stalledGet: 'timeout',
      stalledMessage: true,
      plain: 2,
      fresh: 3,
      ended: 'SessionStoreError unavailable',
      noRoom: 'timeout',
      noRoomMessage: true,
      plainBehind: 4,
      disposed: true,
    })
  },
  60_000,
)
