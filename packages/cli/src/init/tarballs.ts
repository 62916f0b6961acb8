import { readdirSync } from 'node:fs'
import { resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

/**
 * The `.packs/` folder of the clone this command runs from, when it holds the packed @ptc/cli (`pnpm pack:all`):
 * a starter installs the @ptc packages from there until they are on the npm registry. Undefined when this
 * command was installed (from tarballs or a registry) rather than run from a clone.
 */
export function clonePacks(from: string = fileURLToPath(import.meta.url)): string | undefined {
  // packages/cli/{src,dist}/… -> the clone's root.
  const match = /^(.*)[\\/]packages[\\/]cli[\\/](?:src|dist)[\\/]/.exec(from)
  if (match?.[1] === undefined) return undefined
  const packs = resolve(match[1], '.packs')
  try {
    return readdirSync(packs).some((name) => /^ptc-cli-.*\.tgz$/.test(name)) ? packs : undefined
  } catch {
    return undefined
  }
}

/** The lines `ptc init` prints about installing the starter's dependencies. */
export function installSteps(packs: string | undefined): { command: string; notes: string[] } {
  // The folder quoted for a shell when it needs it; the glob stays outside the quotes.
  const folder =
    packs === undefined
      ? '/path/to/ptc/.packs'
      : /^[\w./@+-]+$/.test(packs)
        ? packs
        : `'${packs.replace(/'/g, `'\\''`)}'`
  const found = packs === undefined ? '' : ` (found in ${packs})`
  const notes = [
    'The @ptc packages are not on the npm registry yet: npm install takes the tarballs that',
    `\`npx --yes pnpm@10.34.9 pack:all\` makes in a clone of ptc${found}; once they are published,`,
    'a plain `npm install` will do.',
    'npm install compiles isolated-vm (the optional native backend) from source and can print nothing for a few',
    'minutes; when it cannot be built, the install still succeeds and programs run on QuickJS.',
  ]
  return { command: `npm install ${folder}/*.tgz`, notes }
}
