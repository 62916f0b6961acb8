import { readdir, readFile, rm, writeFile } from 'node:fs/promises'
import { join, resolve } from 'node:path'
import { build, defineConfig } from 'tsup'

/**
 * sucrase (the TypeScript stripper) as one CommonJS file, required on a program's first strip: its package is a
 * hundred files, which took 45-55 ms to require here, the bundle 12-16 ms (the first TypeScript run of a process
 * waits for it). CommonJS so that `stripTypeScript` stays synchronous. The licenses of the packages it holds (read
 * from esbuild's list of its inputs) ship beside it.
 */
async function bundleStripper(outDir: string): Promise<void> {
  await build({
    config: false,
    entry: { stripper: 'src/stripper-bundle.ts' },
    outDir,
    format: ['cjs'],
    outExtension: () => ({ js: '.cjs' }),
    noExternal: [/.*/],
    platform: 'node',
    target: 'node20',
    clean: false,
    silent: true,
    metafile: true,
  })
  const metafile = join(outDir, 'metafile-cjs.json')
  const meta = JSON.parse(await readFile(metafile, 'utf8')) as { inputs: Record<string, unknown> }
  await rm(metafile)
  const dirs = new Set<string>()
  for (const input of Object.keys(meta.inputs)) {
    const at = /^(.*node_modules\/(?:@[^/]+\/)?[^/]+)\//.exec(input)
    if (at?.[1] !== undefined) dirs.add(at[1])
  }
  const notices: string[] = []
  for (const dir of [...dirs].sort()) {
    const manifest = JSON.parse(await readFile(join(dir, 'package.json'), 'utf8')) as {
      name: string
      version: string
      license: string
    }
    const file = (await readdir(dir)).find((name) => /^licen[cs]e(\.md|\.txt)?$/i.test(name))
    if (file === undefined)
      throw new Error(`tsup.config.ts: ${manifest.name} has no license file to ship with dist/stripper.cjs`)
    notices.push(
      `${manifest.name}@${manifest.version} ` +
        `(${manifest.license})\n\n${(await readFile(join(dir, file), 'utf8')).trim()}\n`,
    )
  }
  await writeFile(
    join(outDir, 'stripper.cjs.LICENSES.txt'),
    `stripper.cjs bundles these packages:\n\n${notices.join('\n---\n\n')}`,
  )
  await checkSiblings(outDir)
}

/**
 * `strip.ts` finds `stripper.cjs` and `prepare-worker.js` beside the file it was bundled into: a build where that
 * file landed in a subfolder of `outDir` (tsup inlines a module used by one entry into that entry) would fail only
 * when a program is stripped. This fails the build instead.
 */
async function checkSiblings(outDir: string): Promise<void> {
  let found = 0
  for (const entry of await readdir(outDir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile() || !entry.name.endsWith('.js')) continue
    const file = join(entry.parentPath, entry.name)
    const text = await readFile(file, 'utf8')
    if (!SIBLINGS.test(text)) continue
    if (resolve(entry.parentPath) !== resolve(outDir)) {
      throw new Error(
        `tsup.config.ts: ${file} loads ./stripper.cjs or ./prepare-worker.js, which are in ${outDir}, not beside it`,
      )
    }
    if (STRIPPER.test(text)) found++
  }
  if (found === 0)
    throw new Error('tsup.config.ts: no built file loads ./stripper.cjs: has strip.ts changed how it finds it?')
}

const SIBLINGS = /["']\.\/(?:stripper\.cjs|prepare-worker\.js)["']/
const STRIPPER = /["']\.\/stripper\.cjs["']/

// A function of the command line's options: the stripper goes where the rest goes (`scripts/build-js.ts` builds
// into a staging folder with `--out-dir`, then keeps only what was written there).
export default defineConfig((cli) => ({
  entry: {
    index: 'src/index.ts',
    'backend/index': 'src/backend/index.ts',
    'conformance/index': 'src/conformance/index.ts',
    'session/index': 'src/sessions/index.ts',
    'prepare-worker': 'src/prepare-worker.ts',
  },
  format: ['esm'],
  clean: true,
  sourcemap: true,
  target: 'node20',
  external: ['vitest'],
  onSuccess: () => bundleStripper(cli.outDir ?? 'dist'),
}))
