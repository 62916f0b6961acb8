import { WireNameCollisionError } from '../errors.js'

/**
 * OpenAI and Anthropic tool names must match `^[a-zA-Z0-9_-]{1,64}$`, so a
 * namespaced ptc name (`fs.read_file`) is sent as `fs_read_file`. Decoding
 * maps a wire name back through the known names.
 */
export function wireToolName(name: string): string {
  const cleaned = name.replace(/[^A-Za-z0-9_-]/g, '_')
  return cleaned.length <= 64 ? cleaned : cleaned.slice(0, 64)
}

/** The ptc name whose wire name is `wire` (the first such among `names`), else `wire` itself. */
export function fromWireToolName(wire: string, names: readonly string[] | undefined): string {
  if (names === undefined || names.includes(wire)) return wire
  return names.find((name) => wireToolName(name) === wire) ?? wire
}

/**
 * The wire names of a tool list, in order.
 * @throws WireNameCollisionError when two different names share a wire name (one would be unreachable)
 */
export function wireToolNames(names: readonly string[]): string[] {
  const owners = new Map<string, string>()
  return names.map((name) => {
    const wire = wireToolName(name)
    const owner = owners.get(wire)
    if (owner !== undefined && owner !== name) throw new WireNameCollisionError(wire, owner, name)
    owners.set(wire, name)
    return wire
  })
}
