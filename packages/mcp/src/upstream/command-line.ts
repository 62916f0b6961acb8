import { McpServeUsageError } from '../errors.js'

/** How to reach one upstream MCP server: a command to start over stdio, or the URL of an HTTP server. */
export type UpstreamCommand =
  | {
      /** Namespace of its tools (`<name>.<tool>`); derived from the server's reported name when absent. */
      readonly name?: string
      readonly command: string
      readonly args: readonly string[]
    }
  | {
      readonly name?: string
      /** An `http:` or `https:` MCP endpoint (Streamable HTTP, else the legacy HTTP+SSE transport). */
      readonly url: string
      /** Sent with every request (`--upstream-header`). */
      readonly headers?: Readonly<Record<string, string>>
    }

const NAME = /^[A-Za-z0-9_-]+$/

/**
 * Split a command line into words, POSIX-shell style but without expansion:
 * whitespace separates words, `'…'` is literal, `"…"` honours `\"`, `\\`, `\$`
 * and `` \` ``, and a backslash outside quotes escapes the next character.
 * @throws McpServeUsageError on an unterminated quote or a trailing backslash.
 */
export function splitWords(line: string): string[] {
  const words: string[] = []
  let word = ''
  let inWord = false
  for (let i = 0; i < line.length; i++) {
    const c = line[i] as string
    if (c === "'") {
      const end = line.indexOf("'", i + 1)
      if (end < 0) throw new McpServeUsageError(`unterminated ' in ${JSON.stringify(line)}`)
      word += line.slice(i + 1, end)
      inWord = true
      i = end
    } else if (c === '"') {
      inWord = true
      let j = i + 1
      for (; j < line.length && line[j] !== '"'; j++) {
        if (line[j] === '\\' && j + 1 < line.length && '"\\$`'.includes(line[j + 1] as string)) j++
        word += line[j] as string
      }
      if (j >= line.length) throw new McpServeUsageError(`unterminated " in ${JSON.stringify(line)}`)
      i = j
    } else if (c === '\\') {
      if (i + 1 >= line.length) throw new McpServeUsageError(`trailing backslash in ${JSON.stringify(line)}`)
      word += line[++i] as string
      inWord = true
    } else if (/\s/.test(c)) {
      if (inWord) words.push(word)
      word = ''
      inWord = false
    } else {
      word += c
      inWord = true
    }
  }
  if (inWord) words.push(word)
  return words
}

/**
 * Parse one `--upstream` value: `[name=]command [args…]`, or `[name=]URL` for a server over HTTP (one
 * `http:` or `https:` word). The optional `name=` prefix (letters, digits, `_`, `-`) chooses the tools'
 * namespace.
 * @throws McpServeUsageError when the command is empty, the name is invalid, or a URL has more words.
 */
export function parseUpstreamCommand(value: string): UpstreamCommand {
  const words = splitWords(value)
  let name: string | undefined
  const first = words[0]
  if (first !== undefined) {
    const eq = first.indexOf('=')
    if (eq > 0 && !first.slice(0, eq).includes('/')) {
      name = first.slice(0, eq)
      if (!NAME.test(name))
        throw new McpServeUsageError(`upstream name ${JSON.stringify(name)} must use only letters, digits, _ and -`)
      const rest = first.slice(eq + 1)
      if (rest === '') words.shift()
      else words[0] = rest
    }
  }
  const [command, ...args] = words
  if (command === undefined || command === '')
    throw new McpServeUsageError(`--upstream ${JSON.stringify(value)} has no command`)
  if (/^https?:\/\//i.test(command)) {
    if (args.length > 0)
      throw new McpServeUsageError(
        `--upstream ${JSON.stringify(value)}: a URL upstream takes no arguments (headers go in --upstream-header)`,
      )
    if (!URL.canParse(command))
      throw new McpServeUsageError(`--upstream ${JSON.stringify(value)}: ${JSON.stringify(command)} is not a URL`)
    return name === undefined ? { url: command } : { name, url: command }
  }
  return name === undefined ? { command, args } : { name, command, args }
}

/**
 * Parse one `--upstream-header` value, `name=Header: value`: the header the URL upstream `name` gets.
 * @throws McpServeUsageError when it is not of that form
 */
export function parseUpstreamHeader(value: string): {
  readonly upstream: string
  readonly header: string
  readonly value: string
} {
  const eq = value.indexOf('=')
  const colon = value.indexOf(':', eq + 1)
  const upstream = value.slice(0, Math.max(eq, 0))
  const header = value.slice(eq + 1, Math.max(colon, eq + 1)).trim()
  if (eq <= 0 || colon < 0 || !NAME.test(upstream) || !/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(header)) {
    throw new McpServeUsageError(
      `--upstream-header ${JSON.stringify(value)} must be name=Header: value (the name of a URL --upstream, then an ` +
        `HTTP header)`,
    )
  }
  const headerValue = value.slice(colon + 1).trim()
  // eslint-disable-next-line no-control-regex -- a header value must not hold control characters (CR, LF, …)
  if (/[\u0000-\u0008\u000a-\u001f\u007f]/.test(headerValue))
    throw new McpServeUsageError(`--upstream-header for ${upstream}: the value of ${header} holds a control character`)
  return { upstream, header, value: headerValue }
}

/** A namespace from a server's reported name: `[A-Za-z0-9_-]` only, never empty. */
export function namespaceOf(serverName: string | undefined): string {
  const cleaned = (serverName ?? '').replace(/[^A-Za-z0-9_-]+/g, '_').replace(/^_+|_+$/g, '')
  return cleaned === '' ? 'upstream' : cleaned
}
