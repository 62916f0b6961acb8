import type { HostedCaller, ToolSchema } from '@ptc/tools'
import { WireNameCollisionError } from '../errors.js'

/**
 * OpenAI and Anthropic tool names must match `^[a-zA-Z0-9_-]{1,64}$`, so a
 * namespaced ptc name (`fs.read_file`) is sent as `fs_read_file`. A longer name keeps its first 55 characters
 * and a hash of the whole name, so that long names differing only at their end stay apart. Decoding maps a wire
 * name back through the known names.
 */
export function wireToolName(name: string): string {
  const cleaned = name.replace(/[^A-Za-z0-9_-]/g, '_')
  return cleaned.length <= 64 ? cleaned : `${cleaned.slice(0, 55)}_${fnv1a(name)}`
}

/** 32-bit FNV-1a of the UTF-16 code units, as 8 hex digits: short, stable, and enough to tell long names apart. */
function fnv1a(text: string): string {
  let hash = 0x811c9dc5
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i)
    hash = Math.imul(hash, 0x01000193) >>> 0
  }
  return hash.toString(16).padStart(8, '0')
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

/** One tool as every provider shape declares it: its API-safe name and a detached copy of its parameters. */
export interface WireSchema {
  name: string
  description: string
  parameters: { type: 'object'; [key: string]: unknown }
}

/**
 * A tool list as the providers declare it, in order: API-safe names and a copy of each parameters schema.
 * @throws WireNameCollisionError when two tools would have the same API name
 */
export function wireSchemas(schemas: readonly ToolSchema[]): WireSchema[] {
  const names = wireToolNames(schemas.map((s) => s.name))
  return schemas.map((s, i) => ({
    name: names[i] as string,
    description: s.description,
    parameters: { ...structuredClone(s.parameters) },
  }))
}

/** An image block as a `data:` URL (how both OpenAI APIs take inline images). */
export function dataUrl(image: { readonly mimeType: string; readonly data: string }): string {
  return `data:${image.mimeType};base64,${image.data}`
}

/**
 * A provider's `allowed_callers` list checked: undefined when not given, else a non-empty list of accepted values.
 * @throws TypeError naming the first value that is not one (`what` says what is)
 */
export function checkAllowedCallers<C extends string>(
  callers: readonly C[] | undefined,
  accepted: (caller: string) => boolean,
  what: string,
): readonly C[] | undefined {
  if (callers === undefined) return undefined
  if (!Array.isArray(callers) || callers.length === 0)
    throw new TypeError(`allowedCallers must be a non-empty array of ${what}`)
  for (const caller of callers)
    if (typeof caller !== 'string' || !accepted(caller))
      throw new TypeError(`allowedCallers: ${JSON.stringify(caller)} is not ${what}`)
  return callers
}

/**
 * A call's program caller (Anthropic's `caller` of a code execution, OpenAI's of type `program`) as ptc's
 * `HostedCaller`, with the program's code when the response carried it (`programs`: code by program id). An id
 * that is not a string is kept empty: the executor refuses that call as malformed.
 */
export function hostedCaller(type: unknown, id: unknown, programs: ReadonlyMap<string, string>): HostedCaller {
  const programId = typeof id === 'string' ? id : ''
  const code = programs.get(programId)
  return code === undefined ? { type: String(type), id: programId } : { type: String(type), id: programId, code }
}
