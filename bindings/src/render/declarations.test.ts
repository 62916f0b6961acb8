import { describe, expect, test } from 'vitest'
import { checkProgram } from '../check/index.js'
import { createIssue, getStock, listAll, protoTool, sampleTools } from '../_fixtures.js'
import { BindingNameError } from '../errors.js'
import { renderDeclarations, renderSdk, type BindingTool } from './declarations.js'

const compileErrors = (declarations: string): string[] =>
  checkProgram('', declarations).diagnostics.map((d) => `${d.source}:${d.line}:${d.column} ${d.message}`)

describe('renderDeclarations', () => {
  const text = renderDeclarations(sampleTools)

  test('renders the fixed prelude declarations', () => {
    expect(
      text.startsWith(
        'type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue }\n\n',
      ),
    ).toBe(true)
    expect(text).toContain('type ToolName = keyof ToolArgsMap\n')
    expect(text).toContain(
      'declare class ToolCallError extends Error {\n  constructor(toolName: string, message: string, code?: ToolErrorCode, details?: JsonValue)\n  readonly name: "ToolCallError"\n',
    )
    expect(text).toContain(
      '  readonly code: ToolErrorCode\n  /** Structured detail of the failure, where there is some. */\n  readonly details?: JsonValue\n}',
    )
    expect(text).toContain(
      'type ToolErrorCode =\n  | "INVALID_ARGS" | "DENIED" | "TOOL_TIMEOUT" | "TOOL_ERROR" | "ABORTED"',
    )
    expect(text).toContain('declare const tools: Tools\n')
    expect(text).toContain(
      [
        ' * A failed call rejects with a `ToolCallError` (`code`, `details`); calling a name that is not a',
        ' * tool rejects with code `UNKNOWN_TOOL` (`"name" in tools` tells whether a tool exists).',
        ' */\ninterface Tools {',
      ].join('\n'),
    )
    expect(text).toContain('`UNKNOWN_TOOL` (no tool has that name; the message names the closest),\n')
    expect(text).toContain(
      'declare const console: {\n  log(...values: unknown[]): void\n  info(...values: unknown[]): void\n',
    )
  })

  test('a closed object renders exactly, with property docs, literal unions and optional keys', () => {
    expect(text).toContain(
      [
        '  get_stock: {',
        '    /** Product SKU, e.g. "A-100". */',
        '    sku: string',
        '    /** @default "east" */',
        '    warehouse?: "east" | "west"',
        '  }',
      ].join('\n'),
    )
    expect(text).toContain(
      [
        '    /** Units on hand. */',
        '    count: number',
        '    /**',
        '     * Last update',
        '     * @example "2024-01-01T00:00:00Z"',
        '     */',
        '    updatedAt?: string',
      ].join('\n'),
    )
  })

  test('an open object is intersected with Record<string, JsonValue>; oneOf is a union', () => {
    expect(text).toContain(
      [
        '  "github.create_issue": {',
        '    title: string',
        '    labels?: string[]',
        '    assignee?: string | null',
        '  } & Record<string, JsonValue>',
      ].join('\n'),
    )
  })

  test('an array of objects uses Array<…> only when T[] would be ambiguous', () => {
    expect(text).toContain('  list_all: {\n    id: string\n  }[]\n')
    expect(
      renderDeclarations([{ ...listAll, output: { type: 'array', items: { type: 'string', enum: ['a', 'b'] } } }]),
    ).toContain('  list_all: Array<"a" | "b">\n')
    expect(renderDeclarations([{ ...listAll, output: { type: 'array', items: { type: 'object' } } }])).toContain(
      '  list_all: Record<string, JsonValue>[]\n',
    )
    expect(
      renderDeclarations([
        { ...listAll, output: { type: 'array', items: { type: 'array', items: { type: 'integer' } } } },
      ]),
    ).toContain('list_all: number[][]\n')
    expect(renderDeclarations([{ ...listAll, output: { type: 'array' } }])).toContain('list_all: JsonValue[]\n')
    expect(renderDeclarations([{ ...listAll, output: { type: 'number', const: -1 } }])).toContain('list_all: -1\n')
    expect(
      renderDeclarations([{ ...listAll, output: { type: 'array', items: { type: 'number', const: -1 } } }]),
    ).toContain('list_all: Array<-1>\n')
  })

  test('each tool is a JSDoc’d method; exotic names are quoted; args are optional when nothing is required', () => {
    expect(text).toContain(
      '  /** Current stock of one product in one warehouse. */\n  get_stock(args: ToolArgsMap["get_stock"]): Promise<ToolOutputMap["get_stock"]>\n',
    )
    expect(text).toContain(
      '  "github.create_issue"(args: ToolArgsMap["github.create_issue"]): Promise<ToolOutputMap["github.create_issue"]>\n',
    )
    expect(text).toContain('  list_all(args?: ToolArgsMap["list_all"]): Promise<ToolOutputMap["list_all"]>\n')
    expect(text).toContain('  "__proto__"(args?: ToolArgsMap["__proto__"]): Promise<ToolOutputMap["__proto__"]>\n')
    expect(text).toContain('  "__proto__": Record<string, JsonValue>\n')
    expect(text).toContain('Names that are not identifiers work with brackets: `await tools["some.tool"](args)`.')
  })

  test('tools are sorted by code units, not by locale', () => {
    const names = ['b', 'B', 'a', '_', 'Z', 'é'].map((name) => ({ ...protoTool, name }))
    const order = [...renderDeclarations(names).matchAll(/^ {2}(\S+)\(args/gm)].map((m) => m[1])
    expect(order).toEqual(['B', 'Z', '_', 'a', 'b', '"é"'])
  })

  test('the same tool set gives byte-identical text in any order', () => {
    const reversed = renderDeclarations([...sampleTools].reverse())
    const rotated = renderDeclarations([
      sampleTools[2],
      sampleTools[0],
      sampleTools[3],
      sampleTools[1],
    ] as BindingTool[])
    expect(reversed).toBe(text)
    expect(rotated).toBe(text)
  })

  test('the rendered declarations compile with zero diagnostics', () => {
    expect(compileErrors(text)).toEqual([])
    expect(compileErrors(renderDeclarations([]))).toEqual([])
  })

  test('descriptions with */, U+2028 and code cannot break out of their comments', () => {
    const evil = '*/ declare const pwned: 1 /*\u2028*/ } interface X { \u2029 */\r\n*/'
    const tool: BindingTool = {
      name: 'evil',
      description: evil,
      parameters: {
        type: 'object',
        description: evil,
        properties: {
          [`a*/b\u2028`]: { type: 'string', description: evil, title: evil, default: evil, examples: [evil] },
        },
      },
      output: { type: 'string', description: evil },
    }
    const rendered = renderDeclarations([tool])
    expect(rendered).not.toContain('\u2028')
    expect(rendered).not.toContain('\u2029')
    expect(compileErrors(rendered)).toEqual([])
    expect(checkProgram('pwned', rendered).diagnostics.map((d) => d.message)).toEqual(["Cannot find name 'pwned'."])
  })

  test('duplicate names keep one deterministic entry; unnamed entries are skipped', () => {
    const twin = { ...getStock, description: 'another' }
    const a = renderDeclarations([getStock, twin, { ...getStock, name: '' }, null as unknown as BindingTool])
    expect(a).toBe(renderDeclarations([twin, getStock]))
    expect(a.match(/get_stock\(args/g)).toHaveLength(1)
    expect(compileErrors(a)).toEqual([])
  })
})

test('a tool may be any object, e.g. a class with accessors', () => {
  class Tool {
    get name(): string {
      return 'get_stock'
    }
    readonly description = getStock.description
    readonly parameters = getStock.parameters
    readonly output = getStock.output
  }
  expect(renderDeclarations([new Tool()])).toBe(renderDeclarations([getStock]))
})

describe('renderSdk', () => {
  test('returns the declarations and the sorted names', () => {
    const sdk = renderSdk([getStock, createIssue, listAll])
    expect(sdk.toolNames).toEqual(['get_stock', 'github.create_issue', 'list_all'])
    expect(sdk.declarations).toBe(renderDeclarations([listAll, getStock, createIssue]))
  })
  test('rejects run_code, empty and duplicate names', () => {
    expect(() => renderSdk([getStock, { ...getStock, name: 'run_code' }, getStock])).toThrow(BindingNameError)
  })
})

describe('optional properties named after Object members', () => {
  test('a program that leaves out an optional toString, valueOf or constructor type-checks; a wrong value for it does not', () => {
    const tool: BindingTool = {
      name: 'pick',
      description: 'picks',
      parameters: {
        type: 'object',
        properties: {
          mode: {
            oneOf: [
              { type: 'string' },
              {
                type: 'object',
                properties: {
                  toString: { type: 'string' as const, const: '' },
                  valueOf: { type: 'integer' as const },
                  constructor: { type: 'boolean' as const },
                },
                required: [],
              },
            ],
          },
        },
        required: [],
      },
      output: { type: 'object', properties: {}, required: [] },
    }
    const declarations = renderDeclarations([tool])
    expect(declarations).toContain('toString?: "" | Object["toString"]')
    const check = (args: string): string[] =>
      checkProgram(`await tools.pick(${args})`, declarations).diagnostics.map((d) => d.message)
    expect(check('{ mode: { other: 1 } }')).toEqual([])
    expect(check('{ mode: { toString: "", valueOf: 2, constructor: true } }')).toEqual([])
    expect(check('{ mode: { toString: "x" } }')).not.toEqual([])
  })
})
