/**
 * Builds the `ptc` binary the way a user gets it (tsup, `dist/`), plus the
 * workspace packages it imports, each only when its `dist` is missing or older
 * than its sources: `scripts/build-js.ts`, the same build as `pnpm demo`. Test
 * files share one build through its lock folder.
 */
import { join } from 'node:path'
import { buildJs, ROOT } from '../../scripts/build-js.js'

export { ROOT }
export const BIN = join(ROOT, 'packages/cli/dist/bin.js')

/**
 * Builds what is stale (JavaScript only: declarations are not needed to run the binary). `ptc serve`
 * loads @ptc/mcp on demand: its build may fail (then serve says it is unavailable). A dependency
 * mid-edit (sources that do not build yet) keeps its last build; the CLI itself must build.
 */
export function buildCli(): void {
  buildJs({
    packages: ['@ptc/cli'],
    optional: ['@ptc/mcp'],
    keepPreviousOnFailure: true,
    log: (line) => void process.stderr.write(`test/cli: ${line}\n`),
  })
}
