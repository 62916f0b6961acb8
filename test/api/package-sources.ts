/** The workspace's packages and the source files of each, for the tests that hold the sources to a rule. */
import { readdirSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { ROOT } from '../../scripts/build-js.js'

/** Every package folder, relative to the root (`bindings`, `packages/ptc`, `sandbox/quickjs`, …). */
export const PACKAGES = [
  'bindings',
  ...['packages', 'sandbox'].flatMap((parent) => readdirSync(join(ROOT, parent)).map((d) => join(parent, d))),
]

/** The `.ts` files under `dir`, tests (`*.test.ts`, `*.test-d.ts`) left out. */
export function sources(dir: string): string[] {
  const out: string[] = []
  const stack = [dir]
  while (stack.length > 0) {
    const path = stack.pop() as string
    if (statSync(path).isDirectory()) for (const entry of readdirSync(path)) stack.push(join(path, entry))
    else if (path.endsWith('.ts') && !/\.test(-d)?\.ts$/.test(path)) out.push(path)
  }
  return out
}
