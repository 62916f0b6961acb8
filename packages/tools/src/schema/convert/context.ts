import { snapshotJson } from '../../json/snapshot.js'
import type { JsonValue } from '../../json/types.js'

/** One lossy step of a conversion: where in the source schema, and what was lost. */
export interface SchemaWarning {
  /** JSON pointer into the source schema (through `$ref`s: the path where the reference was used). */
  readonly path: string
  /** The source keyword that was dropped or changed, when there is one. */
  readonly keyword?: string
  readonly message: string
}

/** Bounds of one conversion. */
export interface ConvertOptions {
  /** Deepest nesting converted; deeper nodes become unconstrained `{}` with a warning. Default 32. */
  readonly maxDepth?: number
  /** Most nodes converted (a `$ref` DAG can expand exponentially); later nodes become `{}`. Default 5 000. */
  readonly maxNodes?: number
}

/** A plain JSON-ish object read from the source (own enumerable string keys only). */
export type SourceObject = Readonly<Record<string, unknown>>

/** Shared state of one conversion: the root document, the warnings, the budgets. */
export class ConvertContext {
  readonly warnings: SchemaWarning[] = []
  /** Paths whose source admits no value at all (e.g. `allOf` of a string and an object). */
  readonly impossible = new Set<string>()
  readonly #seen = new Set<string>()
  readonly maxDepth: number
  readonly maxNodes: number
  nodes = 0

  constructor(
    readonly root: unknown,
    options: ConvertOptions,
  ) {
    this.maxDepth = options.maxDepth ?? 32
    this.maxNodes = options.maxNodes ?? 5_000
  }

  warn(path: string, message: string, keyword?: string): void {
    const key = `${path}\u0000${keyword ?? ''}\u0000${message}`
    if (this.#seen.has(key)) return
    this.#seen.add(key)
    this.warnings.push(keyword === undefined ? { path, message } : { path, keyword, message })
  }

  /** Warn that `keyword` at `path` was dropped because the subset cannot express it. */
  dropped(
    path: string,
    keyword: string,
    why = 'not expressible in the enforced subset; the upstream server still validates it',
  ): void {
    this.warn(join(path, keyword), `dropped "${keyword}" (${why})`, keyword)
  }

  /** Resolve a local reference (`#`, `#/$defs/X`, any `#/json/pointer`); undefined when it does not resolve. */
  resolve(ref: string): unknown {
    if (!ref.startsWith('#')) return undefined
    let pointer: string
    try {
      pointer = decodeURIComponent(ref.slice(1))
    } catch {
      return undefined
    }
    if (pointer === '') return this.root
    if (!pointer.startsWith('/')) return undefined
    let node: unknown = this.root
    for (const raw of pointer.slice(1).split('/')) {
      const segment = raw.replace(/~1/g, '/').replace(/~0/g, '~')
      if (Array.isArray(node)) {
        const index = Number(segment)
        if (!Number.isInteger(index) || index < 0 || index >= node.length) return undefined
        node = node[index]
      } else if (isSourceObject(node) && Object.hasOwn(node, segment)) node = node[segment]
      else return undefined
    }
    return node
  }
}

/** Whether a value is a non-array object. */
export function isSourceObject(value: unknown): value is SourceObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

/** Append one JSON-pointer segment. */
export function join(path: string, segment: string | number): string {
  return `${path}/${String(segment).replace(/~/g, '~0').replace(/\//g, '~1')}`
}

/** A lossless-JSON copy of an annotation value, or undefined when it is not lossless JSON. */
export function losslessCopy(value: unknown): JsonValue | undefined {
  const snapshot = snapshotJson(value)
  return snapshot.ok ? snapshot.value : undefined
}
