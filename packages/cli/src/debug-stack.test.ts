import { mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, afterEach, describe, expect, test } from 'vitest'
import { memoryIo } from './fixtures/io.js'
import { main } from './main.js'

const ROOT = join(import.meta.dirname, '../../..')
const dir = mkdtempSync(join(tmpdir(), 'ptc-debug-stack-'))
symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'), 'dir')
writeFileSync(
  join(dir, 'throws.mjs'),
  "function openDatabase() {\n  throw new Error('the tools database is unreachable')\n}\nopenDatabase()\n",
)
writeFileSync(
  join(dir, 'setup-throws.mjs'),
  "export default { setup() { connectPolicies() } }\nfunction connectPolicies() { throw new Error('no policy store') }\n",
)
// An output object without additionalProperties: defineTool throws while the module loads.
writeFileSync(
  join(dir, 'bad-schema.mjs'),
  [
    "import { defineTool } from '@ptc/tools'",
    '',
    'export const stock = defineTool({',
    "  name: 'get_stock',",
    "  description: 'Units on hand.',",
    "  parameters: { sku: { type: 'string', required: true } },",
    "  output: { schema: { type: 'object', properties: { units: { type: 'integer' } } } },",
    '  execute: async () => ({ units: 1 }),',
    '})',
    '',
  ].join('\n'),
)
afterAll(() => rmSync(dir, { recursive: true, force: true }))
const debug = process.env['PTC_DEBUG']
afterEach(() => {
  if (debug === undefined) delete process.env['PTC_DEBUG']
  else process.env['PTC_DEBUG'] = debug
})

describe('a tools module or config that throws', () => {
  test.each([
    [
      'a tools module on import',
      ['sdk', '--tools', 'throws.mjs'],
      'ptc: tools module throws.mjs failed to load: the tools database is unreachable',
      /thrown at throws\.mjs:2:9/,
      'openDatabase',
    ],
    [
      "a config's setup",
      ['sdk', '--config', 'setup-throws.mjs'],
      'ptc: config file setup-throws.mjs: setup failed: no policy store',
      /thrown at setup-throws\.mjs:2:\d+/,
      'connectPolicies',
    ],
  ])(
    '%s: one line saying where it threw and naming PTC_DEBUG, and with PTC_DEBUG=1 the stack into its code',
    async (_what, argv, line, at, frame) => {
      delete process.env['PTC_DEBUG']
      const plain = memoryIo(dir)
      expect(await main(argv, plain.io)).toBe(2)
      const [message = '', ...rest] = plain.stderr().split('\n')
      expect(rest).toEqual([''])
      expect(message.startsWith(`${line} (`)).toBe(true)
      expect(message).toMatch(at)
      expect(message).toMatch(/; set PTC_DEBUG=1 for its stack\)$/)
      process.env['PTC_DEBUG'] = '1'
      const debugged = memoryIo(dir)
      expect(await main(argv, debugged.io)).toBe(2)
      const [first = '', ...stack] = debugged.stderr().split('\n')
      expect(first).toMatch(new RegExp(`^${line.replace(/[.()]/g, '\\$&')} \\(thrown at [^;]+\\)$`))
      expect(stack.join('\n')).toMatch(new RegExp(`at ${frame} \\(.*${argv[2]}:\\d+:\\d+\\)`))
    },
  )

  test('a schema error of defineTool says the rule and where in the module the tool is defined', async () => {
    delete process.env['PTC_DEBUG']
    const { io, stderr } = memoryIo(dir)
    expect(await main(['sdk', '--tools', 'bad-schema.mjs'], io)).toBe(2)
    expect(stderr()).toMatch(
      /^ptc: tools module bad-schema\.mjs failed to load: defineTool "\w+": (parameters|output\.schema): .*additionalProperties/,
    )
    expect(stderr()).toMatch(/\(thrown at bad-schema\.mjs:3:\d+; set PTC_DEBUG=1 for its stack\)\n$/)
  })

  test('a file that cannot be read is one line, with no stack to offer', async () => {
    const { io, stderr } = memoryIo(dir)
    expect(await main(['sdk', '--tools', 'missing.mjs'], io)).toBe(2)
    expect(stderr()).toBe('ptc: tools module missing.mjs not found\n')
  })
})
