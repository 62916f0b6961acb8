import { describe, expect, test } from 'vitest'
import { sampleTools } from '../_fixtures.js'
import { renderDeclarations } from '../render/declarations.js'
import { checkProgram, type ProgramDiagnostic } from './index.js'

const sdk = renderDeclarations(sampleTools)
/** 1-based column of `token` in `line`. */
const col = (line: string, token: string): number => line.indexOf(token) + 1
const at = (diagnostics: readonly ProgramDiagnostic[]): [number, number, number][] =>
  diagnostics.map((d) => [d.line, d.column, d.code])

describe('checkProgram', () => {
  test('checking again against the same SDK (its parsed files reused, see host.test.ts) gives the same diagnostics', () => {
    const code = 'await tools.get_stock({ sku: 100 })'
    const first = checkProgram(code, sdk)
    expect(first.ok).toBe(false)
    expect(checkProgram(code, sdk)).toEqual(first)
    expect(checkProgram('return 1', sdk)).toEqual({ ok: true, diagnostics: [] })
    expect(checkProgram(code, sdk)).toEqual(first)
  })

  test('a correct program passes, top-level await and return included', () => {
    const code = [
      'const [stock, issue] = await Promise.all([',
      '  tools.get_stock({ sku: "A-100", warehouse: "west" }),',
      '  tools["github.create_issue"]({ title: "Low stock", labels: ["ops"], assignee: null, extra: { any: [1, "json"] } }),',
      '])',
      'const rows = await tools.list_all()',
      'console.log(stock.count + 1, rows.map((r) => r.id).join(","), issue.url?.length)',
      'try {',
      '  await tools.__proto__({})',
      '} catch (error) {',
      '  if (error instanceof ToolCallError) console.error(error.toolName, error.message, error.name === "ToolCallError")',
      '}',
      'const name: ToolName = "list_all"',
      'return { name, count: stock.count }',
    ].join('\n')
    expect(checkProgram(code, sdk)).toEqual({ ok: true, diagnostics: [] })
  })

  test('a wrong argument type is reported at the model’s line and column', () => {
    const line = 'await tools.get_stock({ sku: 100 })'
    const result = checkProgram(`const a = 1\n${line}`, sdk)
    expect(result.ok).toBe(false)
    expect(at(result.diagnostics)).toEqual([[2, col(line, 'sku'), 2322]])
    expect(result.diagnostics[0]?.message).toBe("Type 'number' is not assignable to type 'string'.")
    expect(result.diagnostics[0]?.source).toBe('program')
  })

  test('a missing required key, an unknown key on a closed object and an unknown enum member are errors', () => {
    const code =
      'await tools.get_stock({ warehouse: "east" })\nawait tools.get_stock({ sku: "a", colour: "red" })\nawait tools.get_stock({ sku: "a", warehouse: "north" })'
    const result = checkProgram(code, sdk)
    expect(at(result.diagnostics)).toEqual([
      [1, 23, 2345],
      [2, 35, 2353],
      [3, 35, 2322],
    ])
    expect(result.diagnostics[0]?.message).toMatch(/Property 'sku' is missing/)
  })

  test('an unknown tool names the Tools interface', () => {
    const result = checkProgram('  await tools.get_stocks({ sku: "a" })', sdk)
    expect(at(result.diagnostics)).toEqual([[1, 15, 2551]])
    expect(result.diagnostics[0]?.message).toBe(
      "Property 'get_stocks' does not exist on type 'Tools'. Did you mean 'get_stock'?",
    )
  })

  test('a misuse of an output field is an error', () => {
    const result = checkProgram('const s = await tools.get_stock({ sku: "a" })\nreturn s.count.toUpperCase()', sdk)
    expect(at(result.diagnostics)).toEqual([[2, 16, 2339]])
  })

  test('optional properties do not accept undefined (JSON has no undefined)', () => {
    const result = checkProgram('await tools.get_stock({ sku: "a", warehouse: undefined })', sdk)
    expect(at(result.diagnostics).map(([l, , c]) => [l, c])).toEqual([[1, 2379]])
  })

  test('host APIs do not exist: fetch, setTimeout, process, require', () => {
    const result = checkProgram('fetch("https://x")\nsetTimeout(() => {}, 1)\nprocess.exit(1)\nrequire("fs")', sdk)
    expect(at(result.diagnostics)).toEqual([
      [1, 1, 2304],
      [2, 1, 2304],
      [3, 1, 2591],
      [4, 1, 2591],
    ])
    expect(result.diagnostics[2]?.message).toBe(
      "Cannot find name 'process'. Programs have only ECMAScript built-ins, tools, ToolCallError and console.",
    )
  })

  test('JavaScript is checked too (checkJs), and TypeScript syntax in it is an error', () => {
    expect(
      checkProgram('const s = await tools.get_stock({ sku: "a" })\nreturn s.count', sdk, { language: 'javascript' }).ok,
    ).toBe(true)
    const wrong = checkProgram('await tools.get_stock({ sku: 1 })', sdk, { language: 'javascript' })
    expect(at(wrong.diagnostics)).toEqual([[1, col('await tools.get_stock({ sku: 1 })', 'sku'), 2322]])
    const typed = checkProgram('const x: number = 1', sdk, { language: 'javascript' })
    expect(at(typed.diagnostics)).toEqual([[1, col('const x: number = 1', 'number'), 8010]])
  })

  test('syntax errors map into the model’s code, an unclosed brace to its end', () => {
    expect(at(checkProgram('let x = 1\nconst = 1', sdk).diagnostics)[0]).toEqual([2, 7, 1134])
    const unclosed = checkProgram('if (true) {\n  console.log(1)', sdk)
    expect(at(unclosed.diagnostics)).toEqual([[2, '  console.log(1)'.length + 1, 1005]])
  })

  test('module syntax is rejected: the program is a function body', () => {
    expect(checkProgram('import fs from "fs"', sdk).ok).toBe(false)
    expect(checkProgram('export const x = 1', sdk).ok).toBe(false)
  })

  test('broken declarations are reported as declaration diagnostics', () => {
    const result = checkProgram('', 'declare const x: NotAType\n')
    expect(result.diagnostics).toEqual([
      { line: 1, column: 18, message: "Cannot find name 'NotAType'.", code: 2304, source: 'declarations' },
    ])
  })
})
