import { describe, expect, test } from 'vitest'
import { renderLine, styled, useColour } from './colour.js'

const terminal = { isTTY: true } as unknown as NodeJS.WritableStream
const pipe = {} as unknown as NodeJS.WritableStream

describe('useColour', () => {
  test('on a terminal only, unless TERM is dumb', () => {
    expect(useColour(terminal, { TERM: 'xterm-256color' })).toBe(true)
    expect(useColour(terminal, {})).toBe(true)
    expect(useColour(terminal, { TERM: 'dumb' })).toBe(false)
    expect(useColour(pipe, { TERM: 'xterm' })).toBe(false)
  })

  test('NO_COLOR with any non-empty value turns it off, even with FORCE_COLOR; an empty one does not', () => {
    for (const value of ['1', '0', 'false', 'yes']) {
      expect(useColour(terminal, { NO_COLOR: value })).toBe(false)
      expect(useColour(pipe, { NO_COLOR: value, FORCE_COLOR: '1' })).toBe(false)
    }
    expect(useColour(terminal, { NO_COLOR: '' })).toBe(true)
  })

  test('FORCE_COLOR turns it on anywhere, except 0 and false, which turn it off', () => {
    expect(useColour(pipe, { FORCE_COLOR: '1' })).toBe(true)
    expect(useColour(pipe, { FORCE_COLOR: '' })).toBe(true)
    expect(useColour(terminal, { FORCE_COLOR: '0' })).toBe(false)
    expect(useColour(terminal, { FORCE_COLOR: 'false' })).toBe(false)
  })
})

describe('renderLine', () => {
  test('colours styled spans when asked, resetting the foreground after each', () => {
    const line = ['  t1  ', styled('green', 'ok'), ' and ', styled('red', 'error')]
    expect(renderLine(line, true)).toBe('  t1  \x1b[32mok\x1b[39m and \x1b[31merror\x1b[39m')
    expect(renderLine(line, false)).toBe('  t1  ok and error')
  })

  test('escapes every span, styled or not: text from a tool cannot end a colour or start a line', () => {
    const line = ['name\x1b[2J', styled('red', 'error \x1b[0m\nptc: forged\u202e')]
    expect(renderLine(line, true)).toBe('name\\x1b[2J\x1b[31merror \\x1b[0m\\nptc: forged\\u202e\x1b[39m')
  })
})
