/** Tool discovery for large catalogs: when the model input inlines every declaration, and when it defers them. */

/** `PtcExecutorOptions.discovery`. */
export interface DiscoveryOptions {
  /**
   * The most characters the SDK section (guidance and declarations) may have before declarations are deferred
   * (default `DEFAULT_DISCOVERY_BUDGET_CHARS`). At or under it the model input is what it is without discovery.
   */
  readonly budgetChars?: number
  /** Tools whose declarations the model always sees, even past the budget (default none). */
  readonly alwaysLoaded?: readonly string[]
  /**
   * The namespace a tool is listed under in the catalog index (default: the name up to its first `.`, else up
   * to its first `_`, `-` or `/`).
   */
  readonly namespace?: (name: string) => string
  /** One line describing a namespace in the catalog index (e.g. an MCP upstream's title), by namespace. */
  readonly namespaces?: Readonly<Record<string, string>>
}

/** The default budget: about 2 000 tokens of declarations. */
export const DEFAULT_DISCOVERY_BUDGET_CHARS = 8_000

/** The name of the built-in search tool. */
export const SEARCH_TOOLS = 'search_tools'

/** Discovery options checked once, with defaults applied. */
export interface ResolvedDiscovery {
  readonly budgetChars: number
  readonly alwaysLoaded: ReadonlySet<string>
  readonly namespace: (name: string) => string
  readonly namespaces: ReadonlyMap<string, string>
}

/** Checks `discovery`; undefined when it is off. */
export function resolveDiscovery(discovery: DiscoveryOptions | false | undefined): ResolvedDiscovery | undefined {
  if (discovery === false) return undefined
  const options: DiscoveryOptions = discovery ?? {}
  if (typeof options !== 'object' || options === null)
    throw new TypeError('discovery must be false or { budgetChars?, alwaysLoaded? }')
  const budgetChars = options.budgetChars ?? DEFAULT_DISCOVERY_BUDGET_CHARS
  if (!Number.isSafeInteger(budgetChars) || budgetChars < 1) {
    throw new TypeError(`discovery.budgetChars must be a positive integer of characters, not ${String(budgetChars)}`)
  }
  const always = options.alwaysLoaded ?? []
  if (!Array.isArray(always) || !always.every((name) => typeof name === 'string' && name !== '')) {
    throw new TypeError('discovery.alwaysLoaded must be an array of tool names (non-empty strings)')
  }
  if (options.namespace !== undefined && typeof options.namespace !== 'function') {
    throw new TypeError('discovery.namespace must be a function (name) => string')
  }
  const namespaces = new Map<string, string>()
  for (const [key, line] of Object.entries(options.namespaces ?? {})) {
    if (typeof line !== 'string') throw new TypeError(`discovery.namespaces[${JSON.stringify(key)}] must be a string`)
    namespaces.set(key, line)
  }
  return Object.freeze({
    budgetChars,
    alwaysLoaded: new Set(always),
    namespace: options.namespace ?? defaultNamespace,
    namespaces,
  })
}

/** `fs.read_text_file` -> `fs`; `issues_create` -> `issues`; a name without a separator is its own namespace. */
export function defaultNamespace(name: string): string {
  const dot = name.indexOf('.')
  if (dot > 0) return name.slice(0, dot)
  const match = /^[^_\-/]+(?=[_\-/])/.exec(name)
  return match === null ? name : match[0]
}
