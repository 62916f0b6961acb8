/**
 * House style (CONTRIBUTING.md): no source file of a package is over 400 lines; tests are not counted. A file past
 * it holds more than one concept: split it where its parts meet.
 */
import { existsSync, readFileSync } from 'node:fs'
import { join, relative } from 'node:path'
import { expect, test } from 'vitest'
import { ROOT } from '../../scripts/build-js.js'
import { PACKAGES, sources } from './package-sources.js'

const MAX_LINES = 400

test(`no source file is over ${MAX_LINES} lines`, () => {
  const files = PACKAGES.filter((dir) => existsSync(join(ROOT, dir, 'src'))).flatMap((dir) =>
    sources(join(ROOT, dir, 'src')),
  )
  expect(files.length).toBeGreaterThan(100)
  const over = files
    .map((file) => [relative(ROOT, file), readFileSync(file, 'utf8').split('\n').length - 1] as const)
    .filter(([, lines]) => lines > MAX_LINES)
  expect(over, 'split these files').toEqual([])
})
