/**
 * House style (CONTRIBUTING.md): no source file of a package is over 400 lines; tests are not counted. A file past
 * it holds more than one concept: split it where its parts meet.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs'
import { join, relative } from 'node:path'
import { expect, test } from 'vitest'
import { ROOT } from '../../scripts/build-js.js'

const MAX_LINES = 400

function sources(dir: string): string[] {
  const out: string[] = []
  const stack = [dir]
  while (stack.length > 0) {
    const path = stack.pop() as string
    if (statSync(path).isDirectory()) for (const entry of readdirSync(path)) stack.push(join(path, entry))
    else if (path.endsWith('.ts') && !/\.test(-d)?\.ts$/.test(path)) out.push(path)
  }
  return out
}

test(`no source file is over ${MAX_LINES} lines`, () => {
  const roots = [
    'bindings/src',
    ...['packages', 'sandbox'].flatMap((parent) => readdirSync(join(ROOT, parent)).map((d) => join(parent, d, 'src'))),
  ]
  const files = roots.flatMap((dir) => sources(join(ROOT, dir)))
  expect(files.length).toBeGreaterThan(100)
  const over = files
    .map((file) => [relative(ROOT, file), readFileSync(file, 'utf8').split('\n').length - 1] as const)
    .filter(([, lines]) => lines > MAX_LINES)
  expect(over, 'split these files').toEqual([])
})
