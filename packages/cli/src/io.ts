import { StringDecoder } from 'node:string_decoder'
import { Writable } from 'node:stream'
import { paint, renderLine, useColour, type Style, type StyledLine } from './colour.js'
import { escapeControl } from './escape.js'

/** The process streams a command uses (tests and embedders pass their own). */
export interface CliIo {
  readonly stdin: NodeJS.ReadableStream & { readonly isTTY?: boolean }
  readonly stdout: NodeJS.WritableStream
  readonly stderr: NodeJS.WritableStream
  /** Folder that relative paths are resolved against. */
  readonly cwd: string
}

export function processIo(): CliIo {
  return { stdin: process.stdin, stdout: process.stdout, stderr: process.stderr, cwd: process.cwd() }
}

/**
 * Writes `text` plus a newline, with every control character except `\n` and
 * `\t` escaped visibly (`escapeControl`): every message and report line of the
 * CLI goes through here, whatever program, tool, file or log text it quotes.
 */
export function writeLine(stream: NodeJS.WritableStream, text = ''): void {
  stream.write(`${escapeControl(text, { multiline: true })}\n`)
}

/** What every message the CLI writes on stderr starts with, once. */
export const MESSAGE_PREFIX = 'ptc: '

/**
 * Writes one message on stderr: `ptc: ` and `text` (which has no prefix of its own) on one line, with every
 * control character escaped (`\n` too), in `style` when `stream` takes colour (`useColour`). Every message
 * goes through here, so none has two prefixes and none has none.
 */
export function writeMessage(stream: NodeJS.WritableStream, text: string, style?: Style): void {
  stream.write(`${paint(style, `${MESSAGE_PREFIX}${text}`, useColour(stream))}\n`)
}

/** Writes a line of spans (every span escaped), coloured when `stream` takes colour (`useColour`). */
export function writeStyledLine(stream: NodeJS.WritableStream, line: StyledLine): void {
  stream.write(`${renderLine(line, useColour(stream))}\n`)
}

/** Whether `stream` is a terminal. */
export function isTerminal(stream: NodeJS.WritableStream): boolean {
  return (stream as { isTTY?: boolean }).isTTY === true
}

/**
 * Writes what the model receives (`ptc run`'s text, `ptc sdk`'s prompt) plus a
 * newline: byte-exact when `stream` is a pipe or a file, escaped like
 * `writeLine` when it is a terminal.
 */
export function writeModelText(stream: NodeJS.WritableStream, text: string): void {
  if (isTerminal(stream)) writeLine(stream, text)
  else stream.write(`${text}\n`)
}

/**
 * A stream that writes into `stream` with every control character except `\n` and `\t` escaped,
 * like `writeLine`: for text the CLI passes on without composing it (`ptc serve`'s messages and its
 * upstreams' stderr). UTF-8 split across chunks is decoded whole.
 */
export function escapingStream(stream: NodeJS.WritableStream): Writable {
  const decoder = new StringDecoder('utf8')
  // Done when `stream` took the text: its backpressure and its failure (a closed pipe) are this stream's.
  const pass = (text: string, done: (error?: Error | null) => void): void => {
    if (text === '') done()
    else stream.write(escapeControl(text, { multiline: true }), done)
  }
  return new Writable({
    decodeStrings: false,
    write(chunk: Buffer | string, _encoding, done) {
      pass(typeof chunk === 'string' ? chunk : decoder.write(chunk), done)
    },
    final(done) {
      pass(decoder.end(), done)
    },
  })
}
