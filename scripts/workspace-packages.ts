/**
 * The workspace packages, as build-js.ts builds them: each one's folder, workspace dependencies and the
 * `dist/` files its `exports` map names, and the order that builds dependencies first.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

/** The repository root. */
export const ROOT = fileURLToPath(new URL('..', import.meta.url))

/** Workspace folders, as in pnpm-workspace.yaml. */
const WORKSPACE_GLOBS = ['packages', 'sandbox']
const WORKSPACE_DIRS = ['bindings']

export interface WorkspacePackage {
  readonly name: string
  /** Absolute folder. */
  readonly dir: string
  /** Workspace dependencies (`dependencies` and `optionalDependencies`). */
  readonly deps: readonly string[]
  /** `dist/…` files the `exports` map points at (`import` conditions). */
  readonly exportTargets: readonly string[]
  /** `dist/…` declaration files the `exports` map points at (`types` conditions). */
  readonly typeTargets: readonly string[]
  /** Each of those, the source its export names (`@ptc/source`: `./src/sessions/index.ts`), where it names one. */
  readonly typeSources: Readonly<Record<string, string>>
}

interface PackageJson {
  name?: string
  dependencies?: Record<string, string>
  optionalDependencies?: Record<string, string>
  exports?: unknown
}

function workspacePackages(root: string): Map<string, WorkspacePackage> {
  const dirs = [...WORKSPACE_DIRS.map((d) => join(root, d))]
  for (const glob of WORKSPACE_GLOBS) {
    const parent = join(root, glob)
    if (!existsSync(parent)) continue
    for (const entry of readdirSync(parent)) dirs.push(join(parent, entry))
  }
  const out = new Map<string, WorkspacePackage>()
  for (const dir of dirs) {
    const file = join(dir, 'package.json')
    if (!existsSync(file)) continue
    const pkg = JSON.parse(readFileSync(file, 'utf8')) as PackageJson
    if (pkg.name === undefined) continue
    const deps = [...Object.entries(pkg.dependencies ?? {}), ...Object.entries(pkg.optionalDependencies ?? {})]
      .filter(([, version]) => version.startsWith('workspace:'))
      .map(([name]) => name)
    out.set(pkg.name, {
      name: pkg.name,
      dir,
      deps,
      exportTargets: exportTargets(pkg.exports, 'import'),
      typeTargets: exportTargets(pkg.exports, 'types'),
      typeSources: typeSources(pkg.exports),
    })
  }
  return out
}

/**
 * The targets of one condition of an exports map (`import`: `./dist/index.js`, …; `types`:
 * `./dist/index.d.ts`, …).
 */
function exportTargets(exports: unknown, condition: 'import' | 'types'): string[] {
  const targets: string[] = []
  const stack: unknown[] = [exports]
  while (stack.length > 0) {
    const node = stack.pop()
    if (typeof node !== 'object' || node === null) continue
    for (const [key, value] of Object.entries(node)) {
      if (key === condition && typeof value === 'string') targets.push(value)
      else if (typeof value === 'object') stack.push(value)
    }
  }
  return targets
}

/** The `@ptc/source` of each export that has one, by its `types` target. */
function typeSources(exports: unknown): Record<string, string> {
  const sources: Record<string, string> = {}
  const stack: unknown[] = [exports]
  while (stack.length > 0) {
    const node = stack.pop()
    if (typeof node !== 'object' || node === null) continue
    const { types, '@ptc/source': source } = node as Record<string, unknown>
    if (typeof types === 'string' && typeof source === 'string') sources[types] = source
    for (const value of Object.values(node)) if (typeof value === 'object') stack.push(value)
  }
  return sources
}

/** The names of every workspace package. */
export function workspacePackageNames(root: string = ROOT): string[] {
  return [...workspacePackages(root).keys()].sort()
}

/** `names` and their workspace dependencies, dependencies first. */
export function buildOrder(names: readonly string[], root: string = ROOT): WorkspacePackage[] {
  const all = workspacePackages(root)
  const order: WorkspacePackage[] = []
  const state = new Map<string, 'visiting' | 'done'>()
  // Iterative depth-first post-order: a package after everything it depends on.
  const stack: { name: string; expanded: boolean }[] = names.map((name) => ({ name, expanded: false })).reverse()
  while (stack.length > 0) {
    const frame = stack.pop() as { name: string; expanded: boolean }
    const pkg = all.get(frame.name)
    if (pkg === undefined) throw new Error(`build-js: no workspace package named ${frame.name}`)
    if (frame.expanded) {
      state.set(pkg.name, 'done')
      order.push(pkg)
      continue
    }
    if (state.get(pkg.name) === 'done') continue
    if (state.get(pkg.name) === 'visiting') throw new Error(`build-js: dependency cycle through ${pkg.name}`)
    state.set(pkg.name, 'visiting')
    stack.push({ name: pkg.name, expanded: true })
    for (const dep of [...pkg.deps].reverse()) if (state.get(dep) !== 'done') stack.push({ name: dep, expanded: false })
  }
  return order
}
