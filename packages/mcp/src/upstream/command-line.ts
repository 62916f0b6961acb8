import { McpServeUsageError } from '../errors.js'

/** How to start one upstream MCP server over stdio. */
export interface UpstreamCommand {
  /** Namespace of its tools (`<name>.<tool>`); derived from the server's reported name when absent. */
  readonly name?: string
  readonly command: string
  readonly args: readonly string[]
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
 * Parse one `--upstream` value: `[name=]command [args…]`. The optional `name=`
 * prefix (letters, digits, `_`, `-`) chooses the tools' namespace.
 * @throws McpServeUsageError when the command is empty or the name is invalid.
 */
export function parseUpstreamCommand(value: string): UpstreamCommand {
  const words = splitWords(value)
  let name: string | undefined
  const first = words[0]
  if (first !== undefined) {
    const eq = first.indexOf('=')
    if (eq > 0 && !first.slice(0, eq).includes('/')) {
      name = first.slice(0, eq)
      if (!NAME.test(name)) throw new McpServeUsageError(`upstream name ${JSON.stringify(name)} must use only letters, digits, _ and -`)
      const rest = first.slice(eq + 1)
      if (rest === '') words.shift()
      else words[0] = rest
    }
  }
  const [command, ...args] = words
  if (command === undefined || command === '') throw new McpServeUsageError(`--upstream ${JSON.stringify(value)} has no command`)
  return name === undefined ? { command, args } : { name, command, args }
}

/** A namespace from a server's reported name: `[A-Za-z0-9_-]` only, never empty. */
export function namespaceOf(serverName: string | undefined): string {
  const cleaned = (serverName ?? '').replace(/[^A-Za-z0-9_-]+/g, '_').replace(/^_+|_+$/g, '')
  return cleaned === '' ? 'upstream' : cleaned
}
