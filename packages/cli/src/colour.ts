/**
 * Colour for what the CLI writes for people on stderr (never for the model text on stdout). A small helper
 * instead of `node:util`'s `styleText`: the engines field allows Node 20.11, which lacks it, and Node 20's
 * version does not look at the stream or at NO_COLOR.
 */
import { escapeControl } from './escape.js'

export type Style = 'red' | 'green' | 'yellow'

/** SGR codes that turn a style on and off (off: the default foreground, so styles do not leak). */
const SGR: Readonly<Record<Style, readonly [number, number]>> = { red: [31, 39], green: [32, 39], yellow: [33, 39] }

/** A piece of a line: plain text, or text in a style. */
export type Span = string | { readonly style: Style; readonly text: string }
/** One line of output made of spans; rendered by `renderLine`, which escapes every span. */
export type StyledLine = readonly Span[]

export function styled(style: Style, text: string): Span {
  return { style, text }
}

type Env = Readonly<Record<string, string | undefined>>

/**
 * Whether to colour what goes to `stream`: never when `NO_COLOR` is set to anything but the empty string
 * (no-color.org); always when `FORCE_COLOR` is set and is not `0` or `false`; otherwise only on a terminal
 * that is not `TERM=dumb`.
 */
export function useColour(stream: NodeJS.WritableStream, env: Env = process.env): boolean {
  if ((env['NO_COLOR'] ?? '') !== '') return false
  const force = env['FORCE_COLOR']
  if (force !== undefined) return force !== '0' && force !== 'false'
  return (stream as { isTTY?: boolean }).isTTY === true && env['TERM'] !== 'dumb'
}

/** Text in a style (escaped like every span), or just escaped when colour is off. */
export function paint(style: Style | undefined, text: string, colour: boolean): string {
  const safe = escapeControl(text)
  if (style === undefined || !colour || safe === '') return safe
  const [on, off] = SGR[style]
  return `\x1b[${on}m${safe}\x1b[${off}m`
}

/**
 * The line as text: every span escaped (`escapeControl`, so text from a program or a tool never carries a
 * control character, in a styled span or not), styled spans coloured when `colour` is on.
 */
export function renderLine(line: StyledLine, colour: boolean): string {
  return line
    .map((span) => (typeof span === 'string' ? paint(undefined, span, colour) : paint(span.style, span.text, colour)))
    .join('')
}
