import type { Client } from '@modelcontextprotocol/sdk/client/index.js'
import {
  ErrorCode,
  ResultSchema,
  McpError as SdkMcpError,
  ToolSchema,
  type Tool,
} from '@modelcontextprotocol/sdk/types.js'
import { textHead } from '@ptc/tools'
import { badCursor, noToolList, toolListTimedOut } from '../messages.js'

/**
 * The most characters of tools one reading of a tool list keeps (names, descriptions, schemas and the rest, as
 * `listedChars` counts them): the tools past it are left out with a warning. Each page is bounded by the message
 * bound (10 MiB), but an upstream whose pages each listed a 9 MB tool ran the host out of memory after 337 pages.
 * Real lists are far below it (a few thousand characters a tool).
 */
const MAX_LISTED_CHARS = 32 * 1024 * 1024

/** The longest name of an upstream tool, in characters (the MCP specification's 128): a longer one skips its tool. */
const MAX_UPSTREAM_TOOL_NAME_CHARS = 128
/** A character no tool name may hold: C0 controls (NUL, line ends, escape), DEL and C1 controls. */
// eslint-disable-next-line no-control-regex -- control characters are what it finds
const CONTROL_CHARACTER = /[\u0000-\u001f\u007f-\u009f]/
/** Bidirectional controls: a name holding one shows reversed, in the SDK text and in an approval's question. */
const BIDI_CONTROL = /[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/
/** Half of a surrogate pair, alone. */
const LONE_SURROGATE = /\p{Cs}/u
/** Nothing a reader sees: spaces and format characters (zero-width ones, a byte order mark) only. */
const INVISIBLE = /^[\p{White_Space}\p{Cf}]*$/u

/** How one reading of an upstream's tool list goes. */
export interface ToolListReading {
  /** The upstream's label, in warnings. */
  readonly label: string
  /** The most tools kept, and the most pages asked for (`UpstreamConnectionOptions.maxTools`). */
  readonly maxTools: number
  /** The time the whole reading may take, every page together. */
  readonly timeoutMs: number
  readonly onWarning: (message: string) => void
}

/**
 * The upstream's tool list, every page of it, read within one request timeout: at most `maxTools` tools
 * from at most `maxTools` pages, and a cursor the upstream gave before ends the reading (with a warning
 * each time: the tools read so far are served).
 */
export async function readToolList(client: Client, reading: ToolListReading): Promise<Tool[]> {
  const { label, maxTools: max, timeoutMs: timeout, onWarning } = reading
  const deadline = Date.now() + timeout
  const tools: Tool[] = []
  let chars = 0
  const cursors = new Set<string>()
  let cursor: string | undefined
  for (let pages = 0; pages < max; pages++) {
    const late = (): Error => new Error(toolListTimedOut(timeout, pages))
    const remaining = deadline - Date.now()
    if (remaining <= 0) throw late()
    let page
    try {
      // Read as any result, each tool then checked on its own: the SDK's own reading refused the whole list, and
      // with it every tool of the upstream, for one malformed tool.
      page = await client.request(
        { method: 'tools/list', params: cursor === undefined ? {} : { cursor } },
        ResultSchema,
        { timeout: remaining },
      )
    } catch (error) {
      // The page's own timeout was what remained of the reading's: its timing out is the reading's, whatever the
      // clock says (a timer measured from a loaded event loop's cached time fires before Date.now() reaches the
      // deadline, and the raw "Request timed out" came through, once in a clean clone's CI beside other work).
      const timedOut = error instanceof SdkMcpError && error.code === (ErrorCode.RequestTimeout as number)
      throw timedOut || Date.now() >= deadline ? late() : error
    }
    const { tools: listed, nextCursor: next } = page as { tools?: unknown; nextCursor?: unknown }
    if (!Array.isArray(listed)) throw new Error(noToolList(listed))
    // null, as some servers write "no more pages", ends the list as an absent cursor does.
    const nextCursor = next ?? undefined
    if (nextCursor !== undefined && typeof nextCursor !== 'string') throw new Error(badCursor(nextCursor))
    for (const raw of listed as unknown[]) {
      const parsed = ToolSchema.safeParse(raw)
      if (!parsed.success) {
        const name = (raw as { name?: unknown } | null)?.name
        const issue = parsed.error.issues[0]
        const what =
          issue === undefined
            ? 'it is not a tool'
            : `${issue.path.length === 0 ? 'it' : issue.path.join('.')}: ${issue.message}`
        const named = typeof name === 'string' ? JSON.stringify(textHead(name, 40)) : 'without a name'
        onWarning(`skipped a tool of upstream ${label} (${named}): ${textHead(what, 300)}`)
        continue
      }
      const tool = parsed.data as Tool
      if (tools.length === max) {
        onWarning(`upstream ${label} lists more than ${max} tools: only its first ${max} are served (maxTools)`)
        return tools
      }
      // A name a model could not read or write back (the MCP specification asks for 1 to 128 printable characters).
      const unreadable = unreadableName(tool.name)
      if (unreadable !== undefined) {
        onWarning(
          `skipped a tool of upstream ${label}: its name ${JSON.stringify(tool.name.slice(0, 40))} ${unreadable}`,
        )
        continue
      }
      if (tool.name.length > MAX_UPSTREAM_TOOL_NAME_CHARS) {
        onWarning(
          `skipped a tool of upstream ${label}: its name is ${tool.name.length} characters long, more than ` +
            `${MAX_UPSTREAM_TOOL_NAME_CHARS} (${JSON.stringify(tool.name.slice(0, 40))}…)`,
        )
        continue
      }
      chars += listedChars(tool, MAX_LISTED_CHARS - chars)
      if (chars > MAX_LISTED_CHARS) {
        onWarning(
          `upstream ${label}'s tool list is longer than ${MAX_LISTED_CHARS} characters: only the ` +
            `${tools.length} tools before it are served`,
        )
        return tools
      }
      tools.push(tool)
    }
    cursor = nextCursor
    if (cursor === undefined) return tools
    if (cursors.has(cursor)) {
      onWarning(
        `upstream ${label} gave the same tool list cursor twice: only the ${tools.length} tools listed before ` +
          'it are served',
      )
      return tools
    }
    cursors.add(cursor)
  }
  onWarning(
    `upstream ${label}'s tool list had not ended after ${max} pages: only the ${tools.length} tools on them ` +
      'are served',
  )
  return tools
}

/**
 * About the characters of JSON `value` takes (its strings and keys, and a few for each value), counted up to just past
 * `limit`: iterative, so a schema nested thousands deep is counted like any other.
 */
function listedChars(value: unknown, limit: number): number {
  let chars = 0
  const stack: unknown[] = [value]
  while (stack.length > 0 && chars <= limit) {
    const node = stack.pop()
    if (typeof node === 'string') chars += node.length + 2
    else if (typeof node !== 'object' || node === null) chars += 4
    else if (Array.isArray(node)) {
      chars += 2
      for (const item of node) stack.push(item)
    } else {
      chars += 2
      for (const [key, item] of Object.entries(node)) {
        chars += key.length + 3
        stack.push(item)
      }
    }
  }
  return chars
}

/** Why a tool named `name` cannot be served (a model could not read it, or write it back), or undefined. */
function unreadableName(name: string): string | undefined {
  if (name === '') return 'is empty'
  if (CONTROL_CHARACTER.test(name)) return 'is not printable (it holds a control character)'
  if (LONE_SURROGATE.test(name)) return 'is not well-formed Unicode (it holds a lone surrogate)'
  if (BIDI_CONTROL.test(name)) return 'holds a bidirectional control character (it would show reversed)'
  if (INVISIBLE.test(name)) return 'has no visible character'
  return undefined
}
