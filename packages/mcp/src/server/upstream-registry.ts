import type { Tool } from '@modelcontextprotocol/sdk/types.js'
import type { ToolsView } from '@ptc/tools'
import { namespaceOf } from '../upstream/command-line.js'
import type { UpstreamConnection } from '../upstream/connection.js'
import { upstreamToolDefinition } from '../upstream/tool-definition.js'

interface Entry {
  namespace: string
  fingerprint: string | undefined
  disposers: Array<() => void>
}

/**
 * Keeps each upstream's tools registered as `<namespace>.<tool>`: the
 * namespace is the spec's name or the server's reported name (made unique
 * with `_2`, `_3`…), fixed at the first connection; a changed tool list after
 * a reconnection replaces that upstream's registrations.
 */
export class UpstreamRegistry {
  readonly #entries = new Map<UpstreamConnection, Entry>()
  readonly #taken = new Set<string>()
  /** The upstream namespace of each tool name an upstream registered. */
  readonly #owners = new Map<string, string>()
  /**
   * While the server starts, a tool whose name is taken is recorded here (naming both tools) for the start
   * to be refused; afterwards (a changed tool list) it is skipped with a warning.
   */
  collisions: string[] | undefined = []

  constructor(
    readonly tools: ToolsView,
    readonly warn: (message: string) => void,
    readonly changed: () => void,
  ) {}

  /** Reserve the namespaces chosen explicitly, so derived ones never take them. */
  reserve(names: Iterable<string>): void {
    for (const name of names) this.#taken.add(name)
  }

  namespaceOf(connection: UpstreamConnection): string | undefined {
    return this.#entries.get(connection)?.namespace
  }

  sync(connection: UpstreamConnection, tools: readonly Tool[]): void {
    let entry = this.#entries.get(connection)
    const fingerprint = fingerprintOf(tools)
    if (fingerprint !== undefined && entry?.fingerprint === fingerprint) return
    if (entry === undefined) {
      const namespace = connection.spec.name ?? this.#unique(namespaceOf(connection.serverName))
      this.#taken.add(namespace)
      connection.label = namespace
      entry = { namespace, fingerprint, disposers: [] }
      this.#entries.set(connection, entry)
    }
    for (const dispose of entry.disposers) dispose()
    entry.disposers = []
    entry.fingerprint = fingerprint
    const { namespace } = entry
    for (const tool of tools) {
      let conversion
      try {
        conversion = upstreamToolDefinition(connection, namespace, tool)
      } catch (error) {
        // What the upstream sent could not be read or converted: only that tool is lost, not its upstream's others.
        this.warn(
          `skipped tool ${namespace}.${String(tool.name)}: ${error instanceof Error ? error.message : String(error)}`,
        )
        continue
      }
      const { definition, warnings } = conversion
      for (const warning of warnings) this.warn(warning)
      if (definition === undefined) continue
      const owner = this.#owners.get(definition.name)
      if (owner === namespace) {
        // Not a collision between two parties: no name given to an upstream would resolve it.
        this.warn(
          `upstream ${namespace} lists a tool named ${JSON.stringify(tool.name)} more than once: only the first is ` +
            `served`,
        )
        continue
      }
      if (owner !== undefined || this.tools.get(definition.name) !== undefined) {
        const other = owner === undefined ? 'a tool the host serves' : `the tool of upstream ${owner}`
        const collision =
          `tool ${JSON.stringify(tool.name)} of upstream ${namespace} would be ` +
          `${JSON.stringify(definition.name)}, the name of ${other}: give one of the upstreams another name (name=… in --upstream) or rename the host's tool`
        if (this.collisions !== undefined) this.collisions.push(collision)
        else this.warn(`skipped ${collision}`)
        continue
      }
      try {
        entry.disposers.push(this.tools.register(definition))
        this.#owners.set(definition.name, namespace)
        entry.disposers.push(() => this.#owners.delete(definition.name))
      } catch (error) {
        this.warn(`skipped tool ${definition.name}: ${error instanceof Error ? error.message : String(error)}`)
      }
    }
    this.changed()
  }

  /** Remove every upstream registration. */
  clear(): void {
    for (const entry of this.#entries.values()) for (const dispose of entry.disposers) dispose()
    this.#entries.clear()
    this.#owners.clear()
  }

  #unique(base: string): string {
    if (!this.#taken.has(base)) return base
    let n = 2
    while (this.#taken.has(`${base}_${n}`)) n++
    return `${base}_${n}`
  }
}

/** The text of a tool list, to see whether it changed; a list too deep to write is always taken as changed. */
function fingerprintOf(tools: readonly Tool[]): string | undefined {
  try {
    return JSON.stringify(tools)
  } catch {
    return undefined
  }
}
