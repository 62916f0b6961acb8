import { mkdir, readdir, stat, writeFile } from 'node:fs/promises'
import { basename, join, relative, resolve } from 'node:path'
import { parseCommandArgs } from '../args.js'
import { CliError, firstLine } from '../errors.js'
import { kindOf } from '../input-file.js'
import { packageName, starterFiles } from '../init/starter.js'
import { clonePacks, installSteps } from '../init/tarballs.js'
import { starterVersions } from '../init/versions.js'
import { writeLine, type CliIo } from '../io.js'

export const INIT_USAGE = `ptc init [DIR]
  Writes a starter project into DIR (default: the working directory), which must be empty or
  not exist yet: package.json, ptc.config.ts (two tools, a policy that denies, one that asks,
  an approval service, limits), program.ts (a program that calls both tools), tsconfig.json,
  .gitignore and README.md. Then: npm install (the @ptc tarballs, until the packages are on the
  npm registry; it may be silent for minutes while isolated-vm compiles), npx ptc run program.ts.`

/**
 * `ptc init`: 0 after writing the starter; 2 when the folder is not empty or cannot be written (nothing is written).
 */
export async function initCommand(args: readonly string[], io: CliIo): Promise<number> {
  const { positionals } = parseCommandArgs('init', args, {})
  if (positionals.length > 1)
    throw new CliError(
      'USAGE',
      `unexpected argument ${JSON.stringify(positionals[1])}; give one folder; see \`ptc init --help\``,
    )
  const given = positionals[0] ?? '.'
  const dir = resolve(io.cwd, given)
  const shown = given === '.' ? 'the working directory' : given
  await checkEmpty(dir, shown)
  const files = starterFiles(packageName(basename(dir)), starterVersions())
  try {
    await mkdir(dir, { recursive: true })
    // `wx`: a file that appeared meanwhile is not overwritten.
    for (const [name, text] of files) await writeFile(join(dir, name), text, { flag: 'wx' })
  } catch (error) {
    throw new CliError('INIT', `cannot write the starter into ${shown}: ${firstLine(error)}`, { cause: error })
  }
  const where = relative(io.cwd, dir)
  writeLine(
    io.stdout,
    `ptc: wrote a starter project to ${where === '' ? 'the working directory' : where}: ${[...files.keys()].join(', ')}`,
  )
  const install = installSteps(clonePacks())
  writeLine(io.stdout, 'Next steps:')
  if (where !== '') writeLine(io.stdout, `  cd ${/^[\w./@+-]+$/.test(where) ? where : JSON.stringify(where)}`)
  writeLine(io.stdout, `  ${install.command}`)
  writeLine(io.stdout, '  npx ptc run program.ts')
  // Said before the install starts: it is silent for minutes while isolated-vm compiles.
  for (const note of install.notes) writeLine(io.stdout, note)
  return 0
}

/** A folder that does not exist yet or is empty; anything else is a `CliError('INIT')`. */
async function checkEmpty(dir: string, shown: string): Promise<void> {
  const info = await stat(dir).catch((error: unknown) => {
    if ((error as { code?: unknown }).code === 'ENOENT') return undefined
    throw new CliError('INIT', `cannot use ${shown}: ${firstLine(error)}`, { cause: error })
  })
  if (info === undefined) return
  if (!info.isDirectory())
    throw new CliError(
      'INIT',
      `${shown} is ${info.isFile() ? 'a file' : kindOf(info)}, not a folder; ptc init writes into an empty folder`,
    )
  let entries: string[]
  try {
    entries = await readdir(dir)
  } catch (error) {
    throw new CliError('INIT', `cannot read ${shown}: ${firstLine(error)}`, { cause: error })
  }
  if (entries.length > 0) {
    const listed = entries
      .sort()
      .slice(0, 3)
      .map((e) => JSON.stringify(e))
      .join(', ')
    const more = entries.length > 3 ? ` and ${entries.length - 3} more` : ''
    throw new CliError(
      'INIT',
      `${shown} is not empty (${listed}${more}); ptc init writes into an empty folder or a new one, and wrote nothing`,
    )
  }
}
