/**
 * The guest's calendar has no time zone but UTC. QuickJS asks the C library for the local time (`localtime_r`,
 * for a `Date`'s offset and its local fields) and emscripten answers from the host's `Date`, so a program saw
 * the host's zone (`new Date(0).getTimezoneOffset()` was -330 on a host in India): host information beyond the
 * JSON copies and bindings a guest gets, and output that depended on where the host ran. `utcTimeImports`
 * replaces the two imports of emscripten's glue that consult the host's zone (its `localtime` and `tzset`) with
 * UTC ones, before the module is instantiated.
 *
 * The glue is minified, so they are found by what their code reads (both call `getTimezoneOffset`; `localtime`
 * fills the fields from `getSeconds`, `tzset` formats names with `padStart`): a glue where they are not exactly
 * one each is refused, and the engine does not load, rather than run with the host's zone.
 */
type Imports = Record<string, Record<string, unknown>>
/** The module's memory (the part of `WasmMemory` used here). */
interface Memory {
  readonly buffer: ArrayBuffer
}

/** `struct tm`'s int fields, in order (musl): sec, min, hour, mday, mon, year, wday, yday, isdst, gmtoff. */
const TM_FIELDS = 10
const DAY_MS = 86_400_000

/** Replaces the glue's `localtime` and `tzset` imports in `imports` with UTC ones writing into `memory`. */
export function utcTimeImports(imports: Imports, memory: Memory): void {
  const found = {
    localtime: [] as [Record<string, unknown>, string][],
    tzset: [] as [Record<string, unknown>, string][],
  }
  for (const namespace of Object.values(imports)) {
    for (const [name, value] of Object.entries(namespace)) {
      if (typeof value !== 'function') continue
      const code = Function.prototype.toString.call(value)
      if (!code.includes('getTimezoneOffset')) continue
      if (code.includes('getSeconds')) found.localtime.push([namespace, name])
      else if (code.includes('padStart')) found.tzset.push([namespace, name])
      else throw new Error('QuickJS: an unknown time-zone import in the engine glue; this build is not supported')
    }
  }
  const [localtime] = found.localtime
  const [tzset] = found.tzset
  if (found.localtime.length !== 1 || found.tzset.length !== 1 || localtime === undefined || tzset === undefined) {
    throw new Error(
      "QuickJS: the engine glue's localtime and tzset imports were not found; this build is not supported",
    )
  }
  localtime[0][localtime[1]] = (time: number | bigint, tm: number): void => utcFields(memory, time, tm)
  tzset[0][tzset[1]] = (timezone: number, daylight: number, stdName: number, dstName: number): void => {
    const view = new DataView(memory.buffer)
    view.setInt32(timezone, 0, true)
    view.setInt32(daylight, 0, true)
    for (const at of [stdName, dstName]) new Uint8Array(memory.buffer, at, 4).set([0x55, 0x54, 0x43, 0]) // "UTC\0"
  }
}

/** `localtime(time)` in UTC: the `struct tm` at `tm` (the glue's bounds: past 2^53 seconds, an invalid date). */
function utcFields(memory: Memory, time: number | bigint, tm: number): void {
  const seconds =
    typeof time === 'bigint' ? (time < -(2n ** 53n) || time > 2n ** 53n ? Number.NaN : Number(time)) : time
  const date = new Date(seconds * 1000)
  const year = date.getUTCFullYear()
  const fields = [
    date.getUTCSeconds(),
    date.getUTCMinutes(),
    date.getUTCHours(),
    date.getUTCDate(),
    date.getUTCMonth(),
    year - 1900,
    date.getUTCDay(),
    Math.floor((Date.UTC(year, date.getUTCMonth(), date.getUTCDate()) - Date.UTC(year, 0, 1)) / DAY_MS),
    0, // not daylight time
    0, // seconds east of UTC
  ]
  const out = new Int32Array(memory.buffer, tm, TM_FIELDS)
  // An invalid date writes zeros, as the glue's NaN fields did.
  fields.forEach((value, i) => (out[i] = Number.isFinite(value) ? value : 0))
}
