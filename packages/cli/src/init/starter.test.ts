import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, test } from 'vitest'
import { initCommand } from '../commands/init.js'
import { memoryIo } from '../fixtures/io.js'
import { DEFAULT_DURABLE_DIR, DEFAULT_SESSION_DIR, durableFolder, sessionStateOptions } from '../run/session-state.js'
import { starterFiles } from './starter.js'
import { clonePacks } from './tarballs.js'

const dirs: string[] = []
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true })
})
const tempDir = (): string => {
  const dir = mkdtempSync(join(tmpdir(), 'ptc-starter-'))
  dirs.push(dir)
  return dir
}

/** Whether one line of a `.gitignore` (a `dir/` or `*.ext` pattern, the only forms the starter uses) ignores `path`. */
function ignores(pattern: string, path: string): boolean {
  if (pattern.endsWith('/')) return path.startsWith(pattern) || path.includes(`/${pattern}`)
  if (pattern.startsWith('*')) return path.endsWith(pattern.slice(1))
  return path === pattern
}

const VERSIONS = { cli: '^0.1.0', tools: '^0.1.0', tsx: '^4', typescript: '~5.9' }

describe("the starter's .gitignore", () => {
  test('keeps out of git every file ptc writes that holds a secret or state', () => {
    const gitignore = starterFiles('app', VERSIONS).get('.gitignore') ?? ''
    const patterns = gitignore.split('\n').filter((line) => line !== '' && !line.startsWith('#'))
    const written = [
      `${DEFAULT_SESSION_DIR}/secret`,
      `${DEFAULT_DURABLE_DIR}/secret`,
      `${DEFAULT_DURABLE_DIR}/some-run`,
      'run.jsonl',
      'node_modules/x',
    ]
    for (const path of written)
      expect(
        patterns.some((p) => ignores(p, path)),
        path,
      ).toBe(true)
    expect(patterns.some((p) => ignores(p, 'program.ts') || ignores(p, 'ptc.config.ts'))).toBe(false)
  })

  test('the default state folders are private (0700) and their secrets readable by their owner only (0600)', async () => {
    const cwd = tempDir()
    await sessionStateOptions('k', DEFAULT_SESSION_DIR, cwd)
    await durableFolder(DEFAULT_DURABLE_DIR, cwd)
    for (const dir of ['.ptc', DEFAULT_SESSION_DIR, DEFAULT_DURABLE_DIR])
      expect(statSync(join(cwd, dir)).mode & 0o777, dir).toBe(0o700)
    for (const dir of [DEFAULT_SESSION_DIR, DEFAULT_DURABLE_DIR])
      expect(statSync(join(cwd, dir, 'secret')).mode & 0o777, dir).toBe(0o600)
  })
})

describe('ptc init', () => {
  test('its next steps install the @ptc tarballs, say the packages are not on the registry, and warn of the silent build', async () => {
    const cwd = tempDir()
    const { io, stdout } = memoryIo(cwd)
    expect(await initCommand(['app'], io)).toBe(0)
    const out = stdout()
    expect(out).toMatch(/Next steps:\n {2}cd app\n {2}npm install \S+\/\*\.tgz\n {2}npx ptc run program\.ts\n/)
    expect(out).not.toMatch(/^ {2}npm install\n/m)
    expect(out).toMatch(/not on the npm registry yet/)
    expect(out).toMatch(/pack:all/)
    expect(out).toMatch(/isolated-vm .* can print nothing for a few\nminutes/)
    const readme = readFileSync(join(cwd, 'app/README.md'), 'utf8')
    expect(readme).toMatch(/npm install \/path\/to\/ptc\/\.packs\/\*\.tgz/)
    expect(readme).toMatch(/not on the npm registry yet/)
    expect(readme).toMatch(/can print nothing for a few\nminutes/)
  })

  test('finds the tarballs of the clone it runs from, and says nothing of a clone when it was installed', () => {
    const clone = tempDir()
    mkdirSync(join(clone, '.packs'))
    writeFileSync(join(clone, '.packs/ptc-cli-0.1.0.tgz'), '')
    expect(clonePacks(join(clone, 'packages/cli/src/init/tarballs.ts'))).toBe(join(clone, '.packs'))
    expect(clonePacks(join(clone, 'packages/cli/dist/index.js'))).toBe(join(clone, '.packs'))
    expect(clonePacks(join(clone, 'node_modules/@ptc/cli/dist/index.js'))).toBeUndefined()
    rmSync(join(clone, '.packs/ptc-cli-0.1.0.tgz'))
    expect(clonePacks(join(clone, 'packages/cli/src/init/tarballs.ts'))).toBeUndefined()
  })
})
