/**
 * The guest's calendar is UTC whatever the host's time zone (`engine/utc-clock.ts`): QuickJS's local time came
 * from the host's `Date`, so a program saw the host's zone. Real child processes started with a `TZ` each.
 */
import { describe, expect, test } from 'vitest'
import { utcTimeImports } from './engine/utc-clock.js'
import { fixtureJson } from './fixtures/child-json.js'

const UTC_CALENDAR = {
  offset: 0,
  summerOffset: 0,
  text: 'Thu Jan 01 1970 00:00:00 GMT+0000',
  localIsUtc: true,
  hours: 23,
  date: 1,
  parsed: true,
  leapDay: 4,
}

describe('the time zone a program sees', () => {
  test.each(['Asia/Kolkata', 'America/New_York', 'Pacific/Chatham'])(
    'is UTC on a host in %s, on every variant and isolation',
    (zone) => {
      const out = fixtureJson('time-zone.ts', 'all', { TZ: zone }) as {
        hostOffset: number
        seen: Record<string, unknown>
      }
      // The host itself is not in UTC: what the programs saw did not come from it.
      expect(out.hostOffset).not.toBe(0)
      expect(out.seen).toEqual({
        'quickjs inline': UTC_CALENDAR,
        'quickjs worker': UTC_CALENDAR,
        'quickjs-ng inline': UTC_CALENDAR,
        'quickjs-ng worker': UTC_CALENDAR,
      })
    },
    60_000,
  )

  test('an engine glue whose time-zone imports are not found is refused, not run with the host zone', () => {
    const memory = { buffer: new ArrayBuffer(65_536), grow: () => 0 }
    expect(() => utcTimeImports({ a: { x: () => 0 } }, memory)).toThrow(/were not found/)
    const twoLocaltimes = {
      a: {
        x: function (d: Date) {
          return [d.getSeconds(), d.getTimezoneOffset()]
        },
        y: function (d: Date) {
          return [d.getSeconds(), d.getTimezoneOffset()]
        },
        z: function (d: Date) {
          return String(d.getTimezoneOffset()).padStart(2)
        },
      },
    }
    expect(() => utcTimeImports(twoLocaltimes, memory)).toThrow(/were not found/)
  })
})
