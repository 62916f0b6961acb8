/**
 * Which tools a provider declares deferred: loaded only when its tool search finds them. One set of options for
 * `toAnthropicTools`, `toOpenAIResponsesTools` and `toAiSdkTools`, checked here.
 */

/** The deferral options every `to…Tools` function takes. */
export interface DeferralOptions {
  /**
   * Tools to declare deferred (loaded only when the provider's tool search finds them). `true`: all but
   * `alwaysLoaded`; a function: the tools whose ptc name it answers `true` for, `alwaysLoaded` excepted.
   */
  deferLoading?: boolean | ((name: string) => boolean)
  /** Names never deferred (the tools an author marked always-loaded): ptc names, as registered (`fs.read`). */
  alwaysLoaded?: readonly string[]
}

/**
 * The deferral options checked, as a test of a ptc name; undefined when no tool is deferred.
 * @throws TypeError naming the option to change
 */
export function deferralOf(options: DeferralOptions): ((name: string) => boolean) | undefined {
  const { deferLoading, alwaysLoaded } = options
  const listed = Array.isArray(alwaysLoaded) && alwaysLoaded.every((n) => typeof n === 'string')
  if (alwaysLoaded !== undefined && !listed) {
    throw new TypeError(`alwaysLoaded must be an array of tool names (strings), not ${shown(alwaysLoaded)}`)
  }
  if (deferLoading === undefined || deferLoading === false) return undefined
  if (deferLoading !== true && typeof deferLoading !== 'function') {
    throw new TypeError(`deferLoading must be true, false or a function of a tool name, not ${shown(deferLoading)}`)
  }
  const kept = new Set(alwaysLoaded)
  return (name) => !kept.has(name) && (deferLoading === true || deferLoading(name) === true)
}

/** A value as an error message quotes it. */
export function shown(value: unknown): string {
  if (typeof value === 'function') return 'a function'
  try {
    return JSON.stringify(value) ?? String(value)
  } catch {
    return typeof value
  }
}
