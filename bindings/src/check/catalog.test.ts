import fc from 'fast-check'
import { describe, expect, test } from 'vitest'
import { sampleTools } from '../_fixtures.js'
import { renderDeclarations, renderToolDeclaration, type BindingTool } from '../render/declarations.js'
import { checkedToolNames, checkProgram, searchToolsBinding, type CatalogSdk, type ToolCatalog } from './index.js'

/** A catalog over `tools` that records which tools were read. */
function recording(tools: readonly BindingTool[]): { catalog: ToolCatalog; read: string[] } {
  const byName = new Map(tools.map((t) => [t.name, t]))
  const read: string[] = []
  const catalog: ToolCatalog = {
    names: () => [...byName.keys()],
    tool: (name) => {
      read.push(name)
      return byName.get(name)
    },
  }
  return { catalog, read }
}

/** The same, giving each tool's declaration as `search_tools` returns it. */
function declaring(tools: readonly BindingTool[]): { catalog: ToolCatalog; read: string[] } {
  const byName = new Map(tools.map((t) => [t.name, t]))
  const read: string[] = []
  const declaration = (name: string): string | undefined => {
    read.push(name)
    const tool = byName.get(name)
    return tool === undefined ? undefined : renderToolDeclaration(tool)
  }
  return { catalog: { names: () => [...byName.keys()], declaration }, read }
}

const filler = (i: number): BindingTool => ({
  name: `crm_contact_${String(i).padStart(4, '0')}`,
  description: `Contact ${i}.`,
  parameters: { type: 'object', properties: { id: { type: 'string' } }, required: ['id'], additionalProperties: false },
  output: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'], additionalProperties: false },
})
const large = [...sampleTools, ...Array.from({ length: 5_000 }, (_, i) => filler(i))]
/** Small enough to render whole for each comparison. */
const medium = large.slice(0, 300)

describe('checkProgram against a catalog', () => {
  test('a program may call any tool of the catalog, and only the tools it names are read', () => {
    const { catalog, read } = recording(large)
    const code = [
      'const c = await tools.crm_contact_4321({ id: "x" })',
      'const s = await tools["get_stock"]({ sku: c.name })',
      'return s.count',
    ].join('\n')
    expect(checkProgram(code, { catalog })).toEqual({ ok: true, diagnostics: [] })
    expect(read.sort()).toEqual(['crm_contact_4321', 'get_stock'])
  })

  test('a name not in the catalog gets the diagnostics of a check against all of it, "Did you mean" included', () => {
    const full = renderDeclarations(medium)
    const programs = [
      'await tools.get_stocks({ sku: "a" })',
      'await tools.crm_contact_029({ id: "x" })',
      'await tools["github.create_issu"]({ title: "x" })',
      'const t = tools\nawait t.list_al()',
      'const { get_stocks, list_all } = tools\nreturn list_all({ page: "1" })',
      'await tools.nothing_like_it()',
      'await tools.get_stock({ sku: 100 })\nreturn (await tools.list_all()).map((r) => r.nope)',
      'await tools.__proto__({})\nawait tools.__proto_({})',
    ]
    for (const code of programs) {
      const expected = checkProgram(code, full)
      expect(checkProgram(code, { catalog: recording(medium).catalog, searchTools: false }), code).toEqual(expected)
      expect(checkProgram(code, { catalog: declaring(medium).catalog, searchTools: false }), code).toEqual(expected)
    }
    const { catalog } = recording(large)
    const misspelt = checkProgram('await tools.get_stocks({ sku: "a" })', { catalog })
    expect(misspelt.diagnostics.map((d) => d.message)).toEqual([
      "Property 'get_stocks' does not exist on type 'Tools'. Did you mean 'get_stock'?",
    ])
  })

  test('for any names and any misspelling, the diagnostics are those of a check against every declaration', () => {
    const name = fc.stringMatching(/^[a-e_]{1,8}$/)
    fc.assert(
      fc.property(fc.uniqueArray(name, { minLength: 1, maxLength: 12 }), name, (names, called) => {
        const tools = names.map((n) => ({ ...filler(0), name: n }))
        const code = `await tools.${called}({ id: "x" })\nconst t = tools\nawait t["${called}"]({ id: "x" })`
        const full = checkProgram(code, renderDeclarations(tools))
        expect(checkProgram(code, { catalog: recording(tools).catalog, searchTools: false })).toEqual(full)
        expect(checkProgram(code, { catalog: declaring(tools).catalog, searchTools: false })).toEqual(full)
      }),
      { numRuns: 50 },
    )
  }, 120_000)

  test('JavaScript is checked against the catalog too, JSDoc types included', () => {
    const { catalog, read } = recording(large)
    const code = [
      '/** @param {ToolOutputMap["list_all"]} rows */',
      'const ids = (rows) => rows.map((r) => r.id)',
      'return ids([])',
    ].join('\n')
    expect(checkProgram(code, { catalog }, { language: 'javascript' })).toEqual({ ok: true, diagnostics: [] })
    expect(read).toEqual(['list_all'])
  })

  test('a catalog may give declarations instead of schemas: they are read only for the names the program uses', () => {
    const { catalog, read } = declaring(large)
    const code = 'const c = await tools.crm_contact_4321({ id: "x" })\nawait tools.search_tools({ query: c.name })'
    expect(checkProgram(code, { catalog })).toEqual({ ok: true, diagnostics: [] })
    expect(read).toEqual(['crm_contact_4321'])
  })

  test('search_tools is declared: a program can search and read what it found', () => {
    const { catalog } = recording(sampleTools)
    const search = 'const { tools: found } = await tools.search_tools({ query: "stock", limit: 5 })'
    expect(checkProgram(`${search}\nreturn found.map((t) => t.name + t.declaration)`, { catalog }).ok).toBe(true)
    const wrong = checkProgram('await tools.search_tools({ limit: 5 })', { catalog })
    expect(wrong.diagnostics.map((d) => d.code)).toEqual([2345])
    const off = checkProgram(search, { catalog, searchTools: false })
    expect(off.diagnostics.map((d) => d.message)).toEqual(["Property 'search_tools' does not exist on type 'Tools'."])
  })

  test('a catalog tool named search_tools is declared instead of the built-in one', () => {
    const parameters = { type: 'object', properties: { q: { type: 'string' } } } as const
    const own: BindingTool = { ...searchToolsBinding, parameters }
    const { catalog, read } = recording([...sampleTools, own])
    expect(checkProgram('await tools.search_tools({ q: "x" })', { catalog }).ok).toBe(true)
    expect(read).toEqual(['search_tools'])
  })

  test('a program that names no tool reads none, and what the catalog throws is thrown', () => {
    const { catalog, read } = recording(large)
    expect(checkProgram('return 1 + 1', { catalog }).ok).toBe(true)
    expect(read).toEqual([])
    const down = (): never => {
      throw new TypeError('catalog down')
    }
    const throwing: CatalogSdk = { catalog: { names: () => ['boom'], tool: down } }
    expect(() => checkProgram('await tools.boom()', throwing)).toThrow('catalog down')
  })

  test('checkedToolNames lists the tools a check reads: the named ones and the closest to a misspelt one', () => {
    const { catalog, read } = recording(large)
    const code = 'await tools.get_stock({ sku: "a" })\nawait tools.lst_all()\nawait tools.search_tools({ query: "x" })'
    expect(checkedToolNames(code, { catalog })).toEqual(['get_stock', 'list_all'])
    const own = { catalog: { names: () => ['search_tools'], tool: () => undefined } }
    expect(checkedToolNames(code, own)).toEqual(['search_tools'])
    expect(read).toEqual([])
  })
})
