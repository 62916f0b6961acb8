import { readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

/** The `package.json` of package `name` at or above `start` (a file or folder), or undefined. */
function manifestAbove(start: string, name: string): Record<string, unknown> | undefined {
  for (let dir = dirname(start); ; dir = dirname(dir)) {
    try {
      const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as Record<string, unknown>
      if (manifest['name'] === name) return manifest
    } catch {
      // no package.json here, or not ours
    }
    if (dirname(dir) === dir) return undefined
  }
}

export interface StarterVersions {
  /** `^<version>` of @ptc/cli and @ptc/tools, as installed. */
  readonly cli: string
  readonly tools: string
  /** The ranges @ptc/cli itself depends on. */
  readonly tsx: string
  readonly typescript: string
}

/**
 * The dependency ranges of a starter project, read from the installed
 * packages' manifests (this package's, and the @ptc/tools it resolves).
 */
export function starterVersions(): StarterVersions {
  const cli = manifestAbove(fileURLToPath(import.meta.url), '@ptc/cli')
  const tools = manifestAbove(fileURLToPath(import.meta.resolve('@ptc/tools')), '@ptc/tools')
  const version = (manifest: Record<string, unknown> | undefined, what: string): string => {
    const v = manifest?.['version']
    if (typeof v !== 'string') throw new Error(`cannot read the version of ${what} from its package.json`)
    return `^${v}`
  }
  const dependency = (name: string, fallback: string): string => {
    const deps = cli?.['dependencies']
    const range = typeof deps === 'object' && deps !== null ? (deps as Record<string, unknown>)[name] : undefined
    return typeof range === 'string' ? range : fallback
  }
  return {
    cli: version(cli, '@ptc/cli'),
    tools: version(tools, '@ptc/tools'),
    tsx: dependency('tsx', 'latest'),
    typescript: dependency('typescript', 'latest'),
  }
}
