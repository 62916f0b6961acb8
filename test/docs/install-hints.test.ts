/**
 * The install lines of the READMEs a new user meets first work today: the @ptc packages are not on the npm
 * registry, so `npm install @ptc/…` fails (E404) and the lines install the packed tarballs instead.
 */
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { expect, test } from 'vitest'
import { extractBlocks } from './blocks.js'

const ROOT = join(import.meta.dirname, '../..')

test.each(['packages/cli/README.md', 'packages/adapters/README.md'])(
  '%s installs the packed tarballs, and says the build may be silent',
  (file) => {
    const text = readFileSync(join(ROOT, file), 'utf8')
    const installs = extractBlocks(file, text)
      .filter((block) => block.language === 'sh')
      .flatMap((block) => block.code.split('\n'))
      .filter((line) => /^npm install /.test(line))
    expect(installs.length).toBeGreaterThan(0)
    for (const line of installs) expect(line).toMatch(/^npm install \S*\.packs\/\*\.tgz/)
    expect(text).toMatch(/not on the npm registry yet/)
    expect(text).toMatch(/Once the packages are published, `npm install @ptc\//)
    expect(text).toMatch(/can print nothing for a few minutes/)
  },
)
