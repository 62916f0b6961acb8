/**
 * What the registry's package linters say of a packed tarball: publint (the manifest against the
 * files it ships) and arethetypeswrong (whether TypeScript resolves the same types as Node the
 * code, under every modern module resolution).
 */
import { readFileSync } from 'node:fs'
import { checkPackage, createPackageFromTarballData } from '@arethetypeswrong/core'
import type { ResolutionKind } from '@arethetypeswrong/core'
import { publint } from 'publint'
import { formatMessage } from 'publint/utils'

export interface LintReport {
  /** publint's errors and warnings, formatted. */
  readonly publint: readonly string[]
  /** arethetypeswrong's problems, as `kind at entrypoint (resolution)`. */
  readonly types: readonly string[]
}

/**
 * The packages are ESM only (`"type": "module"`, an `import` condition and no `require`):
 * resolutions that can only load CommonJS are not theirs to satisfy (attw's `esm-only` profile).
 */
const IGNORED_RESOLUTIONS: ReadonlySet<ResolutionKind> = new Set(['node10', 'node16-cjs'])

export async function lintTarball(tarball: string): Promise<LintReport> {
  const bytes = readFileSync(tarball)
  const data = new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  const { messages, pkg } = await publint({ pack: { tarball: data.slice().buffer }, level: 'warning' })
  const attw = await checkPackage(createPackageFromTarballData(data))
  const types = attw.types === false ? ['the package ships no types'] : []
  if (attw.types !== false) {
    for (const problem of attw.problems) {
      const resolution = 'resolutionKind' in problem ? problem.resolutionKind : undefined
      if (resolution !== undefined && IGNORED_RESOLUTIONS.has(resolution)) continue
      const where = 'entrypoint' in problem ? ` at ${problem.entrypoint}` : ''
      types.push(`${problem.kind}${where}${resolution === undefined ? '' : ` (${resolution})`}`)
    }
  }
  return { publint: messages.map((m) => `${m.type}: ${formatMessage(m, pkg, { color: false }) ?? m.code}`), types }
}
