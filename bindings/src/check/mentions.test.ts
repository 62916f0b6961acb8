import { describe, expect, test } from 'vitest'
import { _parseProgram, _programFile } from './compile.js'
import { _programMentions } from './mentions.js'
import { _typescript } from './typescript.js'

const ts = _typescript()
const mentions = (code: string, language: 'typescript' | 'javascript' = 'typescript') =>
  _programMentions(ts, _parseProgram(ts, _programFile(code, { language })))

describe('the names a program mentions', () => {
  test('every way of reaching a tool names it: a dot, brackets, destructuring, an alias, a type', () => {
    const code = [
      'const a = await tools.dotted({})',
      'const b = await tools["with.dot"]({})',
      'const { shorthand, "quoted.key": q, renamed: r } = tools',
      'const t = tools; await t.aliased()',
      'type Args = ToolArgsMap[`in_type`]',
    ].join('\n')
    const { names, keys } = mentions(code)
    for (const name of ['dotted', 'with.dot', 'shorthand', 'quoted.key', 'renamed', 'aliased', 'in_type']) {
      expect(names.has(name), name).toBe(true)
    }
    // Keys are where a misspelt tool name would be written; plain variables are not.
    expect([...keys].sort()).toEqual(['aliased', 'dotted', 'in_type', 'quoted.key', 'renamed', 'shorthand', 'with.dot'])
  })

  test('in JavaScript, JSDoc types count', () => {
    const { names } = mentions('/** @type {ToolOutputMap["from_jsdoc"]} */\nconst x = []', 'javascript')
    expect(names.has('from_jsdoc')).toBe(true)
  })
})
