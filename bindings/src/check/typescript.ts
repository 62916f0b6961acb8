import { createRequire } from 'node:module'
import type * as TS from 'typescript'

let loaded: typeof TS | undefined

/**
 * The `typescript` package, loaded on first use (an optional peer dependency: only
 * `@ptc/bindings/check` needs it, the main entry never does). Loaded with `require` so
 * `checkProgram` stays synchronous; `typescript` is a CommonJS package. Internal.
 * @throws Error with an install hint when `typescript` is not installed.
 */
export function _typescript(): typeof TS {
  if (loaded !== undefined) return loaded
  const require = createRequire(import.meta.url)
  try {
    loaded = require('typescript') as typeof TS
  } catch (error) {
    throw new Error('@ptc/bindings/check needs the `typescript` package (an optional peer dependency): install it', {
      cause: error,
    })
  }
  return loaded
}

/** The directory of the installed `typescript` package's `lib.*.d.ts` files. Internal. */
export function _libDirectory(ts: typeof TS): string {
  const path = ts.getDefaultLibFilePath({}).replace(/\\/g, '/')
  return path.slice(0, path.lastIndexOf('/'))
}
