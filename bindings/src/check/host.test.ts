import { describe, expect, test } from 'vitest'
import { _createHost, _SDK_FILE } from './host.js'
import { _typescript } from './typescript.js'

const ts = _typescript()
const options = { target: ts.ScriptTarget.ES2022, lib: ['lib.es2023.d.ts'] }
const program = { fileName: '/__ptc__/program.ts', text: 'return 1' }
const host = (declarations: string): ReturnType<typeof _createHost> => _createHost(ts, options, program, declarations)
const parse = (h: ReturnType<typeof _createHost>, fileName: string) => h.getSourceFile(fileName, ts.ScriptTarget.ES2022)

describe('the in-memory compiler host', () => {
  test('every host of the process shares one parsed copy of each lib file', () => {
    const lib = host('').getDefaultLibFileName(options)
    const first = parse(host('declare const a: 1'), lib)
    expect(first?.fileName).toBe(lib)
    expect(parse(host('declare const b: 2'), lib)).toBe(first)
  })

  test('a host checking the same SDK declarations again reuses their parsed file', () => {
    const sdk = 'declare const tools: { again(): void }'
    const first = parse(host(sdk), _SDK_FILE)
    expect(first?.text).toBe(sdk)
    expect(parse(host(sdk), _SDK_FILE)).toBe(first)
    expect(parse(host(`${sdk}\n`), _SDK_FILE)).not.toBe(first)
  })

  test('the eight most recently used declaration texts stay parsed; older ones are parsed again', () => {
    const texts = Array.from({ length: 9 }, (_, i) => `declare const recent${i}: ${i}`)
    const parsed = texts.map((text) => parse(host(text), _SDK_FILE))
    // texts[0] was evicted by the ninth; texts[8] is still there.
    expect(parse(host(texts[8] ?? ''), _SDK_FILE)).toBe(parsed[8])
    expect(parse(host(texts[0] ?? ''), _SDK_FILE)).not.toBe(parsed[0])
  })

  test('the program file is parsed afresh for every host', () => {
    const sdk = 'declare const fresh: 1'
    expect(parse(host(sdk), program.fileName)).not.toBe(parse(host(sdk), program.fileName))
  })
})
