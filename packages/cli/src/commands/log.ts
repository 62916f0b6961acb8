import { resolve } from 'node:path'
import { parseJsonl } from '@ptc/tools/session'
import { onePositional, parseCommandArgs } from '../args.js'
import { safeJson } from '../escape.js'
import { CliError, firstLine } from '../errors.js'
import { oneLine } from '../format.js'
import { readRegularFile } from '../input-file.js'
import { writeLine, writeMessage, type CliIo } from '../io.js'
import { logTreeJson, renderLogTree } from '../log/render.js'
import { buildLogTree } from '../log/tree.js'

/** The largest session log read. */
export const MAX_LOG_BYTES = 256 * 1024 * 1024
/** Skipped lines named one by one on stderr; the rest are counted. */
const MAX_SKIPPED_SHOWN = 20

export const LOG_USAGE = `ptc log FILE.jsonl [--json]
  Shows a session log (written by ptc run --session or a JsonlSession) as a tree: each call with
  its description, duration and outcome, and under it each sub-call with its arguments,
  duration and result. --json prints the tree as one JSON object. Text from the log is printed
  with control characters escaped (\\x1b, \\u202e; in --json as \\u escapes); the file must be a
  regular file of at most 256 MiB.`

/** `ptc log`: 0 after printing the tree; 2 when the file is missing or not a JSON Lines session log. */
export async function logCommand(args: readonly string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseCommandArgs('log', args, { json: { type: 'boolean' } })
  const path = onePositional('log', positionals, 'session log file')
  const read = parseJsonl(
    await readRegularFile({
      what: 'session log',
      shown: path,
      path: resolve(io.cwd, path),
      maxBytes: MAX_LOG_BYTES,
      code: 'INPUT',
    }),
  )
  const firstBad = read.invalidLines[0]
  if (read.events.length === 0 && firstBad !== undefined) {
    throw new CliError(
      'LOG_FORMAT',
      `${path} is not a JSON Lines session log (line ${firstBad.line}: ${firstBad.message})`,
    )
  }
  if (read.events.length === 0 && read.partialTail !== undefined) {
    throw new CliError('LOG_FORMAT', `${path} is not a JSON Lines session log (no complete line)`)
  }
  for (const bad of read.invalidLines.slice(0, MAX_SKIPPED_SHOWN))
    writeMessage(io.stderr, `${path}:${bad.line}: skipped: ${oneLine(bad.message, 300)}`)
  const more = read.invalidLines.length - MAX_SKIPPED_SHOWN
  if (more > 0)
    writeMessage(io.stderr, `${path}: skipped ${more} more line${more === 1 ? '' : 's'} that are not session events`)
  if (read.partialTail !== undefined)
    writeMessage(
      io.stderr,
      `${path}: ignored an unterminated last line (${read.partialTail.bytes} bytes, a write cut short)`,
    )
  const tree = buildLogTree(read.events)
  if (values.json === true) {
    let json: string
    try {
      json = safeJson({
        events: read.events.length,
        calls: logTreeJson(tree),
        skippedLines: read.invalidLines.length,
        partialTail: read.partialTail !== undefined,
      })
    } catch (error) {
      throw new CliError(
        'LOG_FORMAT',
        `${path} cannot be printed as JSON: ${firstLine(error)} (a value in it is nested too deeply)`,
        { cause: error },
      )
    }
    writeLine(io.stdout, json)
  } else {
    const lines = renderLogTree(tree)
    for (const line of lines.length > 0 ? lines : ['(no calls in this log)']) writeLine(io.stdout, line)
  }
  return 0
}
