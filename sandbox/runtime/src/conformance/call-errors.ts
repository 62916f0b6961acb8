import { expect } from 'vitest'
import type { JsonValue } from '../types.js'
import { MAX_RESULT_DEPTH } from '../host-calls.js'
import { MAX_VALUE_DEPTH } from '../prelude/protocol.js'
import { sleep, type SuiteContext } from './context.js'

/** Sub-calls that fail: host rejections as `ToolCallError`, their codes and details, and the depth bounds. */
export function callErrorTests(s: SuiteContext): void {
  s.it('a host rejection becomes a ToolCallError in the guest', async () => {
    const call = async (name: string): Promise<JsonValue> => {
      throw new Error(`no ${name} today`)
    }
    const r = await s.run(
      `try { await tools.fail({ x: 1 }) } catch (e) {
        return [e instanceof ToolCallError, e instanceof Error, e.name, e.toolName, e.message, Object.keys(e).includes('cause')]
      }`,
      { call },
    )
    expect(r.error).toBeUndefined()
    expect(r.value).toEqual([true, true, 'ToolCallError', 'fail', 'no fail today', false])
  })

  s.it(
    'a rejection carries its stable code and JSON details into ToolCallError; nothing else of the host error crosses',
    async () => {
      const withCode = (code: unknown, details?: unknown): Error =>
        Object.assign(new Error(`code ${String(code)}`), { code, details, secret: 'host' })
      const call = async (name: string, args: JsonValue): Promise<JsonValue> => {
        const i = (args as { i: number }).i
        if (i === 0) throw withCode('DENIED', { rule: 'no-refunds', limits: [1, 2] })
        if (i === 1) throw withCode('TOOL_TIMEOUT')
        if (i === 2) throw new Error('plain')
        if (i === 3) throw withCode('not a code')
        if (i === 4) throw withCode('TOOL_ERROR', { n: 1n })
        if (i === 5)
          throw Object.defineProperty(new Error('getter'), 'code', {
            get: () => {
              throw new Error('boom')
            },
          })
        return name
      }
      const r = await s.run(
        `const out = []
      for (let i = 0; i < 6; i++) {
        try { await tools.fail({ i }) } catch (e) { out.push([e.code, e.details === undefined ? null : e.details, 'secret' in e, e instanceof ToolCallError]) }
      }
      try { await tools.fail({ f: () => 1 }) } catch (e) { out.push([e.code, e.message.slice(0, 30)]) }
      const own = new ToolCallError('x', 'mine')
      out.push([own.code, 'details' in own, new ToolCallError('x', 'y', 'DENIED', { a: 1 }).details])
      return out`,
        { call },
      )
      expect(r.error).toBeUndefined()
      expect(r.value).toEqual([
        ['DENIED', { rule: 'no-refunds', limits: [1, 2] }, false, true],
        ['TOOL_TIMEOUT', null, false, true],
        ['TOOL_ERROR', null, false, true],
        ['TOOL_ERROR', null, false, true],
        ['TOOL_ERROR', null, false, true],
        ['TOOL_ERROR', null, false, true],
        ['INVALID_ARGS', 'arguments are not lossless JSO'],
        ['TOOL_ERROR', false, { a: 1 }],
      ])
    },
  )

  s.it(
    'a rejection the program leaves unhandled (a failed call fired and forgotten) does not fail the run',
    async () => {
      const call = async (name: string): Promise<JsonValue> => {
        if (name === 'fail') throw new Error('nope')
        await sleep(20)
        return null
      }
      for (const [code, value] of [
        ['tools.fail({})\nawait tools.slow({})\nreturn 1', 1],
        ['tools.fail({}).then((v) => v)\nawait tools.slow({})\nreturn 2', 2],
        ['tools.echo({ f: () => 1 })\nawait tools.slow({})\nreturn 3', 3],
        [
          'await tools.slow({})\nnew Promise((_, reject) => reject(5))\nPromise.reject(new Error("x"))\nawait tools.slow({})\nreturn 4',
          4,
        ],
      ] as const) {
        const r = await s.run(code, { call })
        expect(r.error, code).toBeUndefined()
        expect(r.value).toBe(value)
      }
      const awaited = await s.run('await tools.fail({})', { call })
      expect(awaited.error?.kind).toBe('exception')
    },
  )

  s.it(
    `a host result deeper than MAX_RESULT_DEPTH (${MAX_RESULT_DEPTH}) rejects only that call; one at the bound arrives`,
    async () => {
      const nest = (depth: number): JsonValue => {
        let v: JsonValue = []
        for (let i = 1; i < depth; i++) v = [v]
        return v
      }
      const results: Record<string, JsonValue> = {
        deep: nest(100_000),
        atBound: nest(MAX_RESULT_DEPTH),
        shallow: [[[[]]]],
      }
      const r = await s.run(
        `const depthOf = (v) => { let d = 0; while (Array.isArray(v)) { v = v[0]; d++ } return d }
      let outcome
      try { outcome = depthOf(await tools.deep({})) } catch (e) { outcome = e instanceof ToolCallError ? e.message : 'other: ' + String(e) }
      return [outcome, depthOf(await tools.atBound({})), depthOf(await tools.shallow({}))]`,
        { call: async (name) => results[name] ?? null, bindings: ['deep', 'atBound', 'shallow'] },
      )
      expect(r.error).toBeUndefined()
      expect(r.value).toEqual([
        `the tool result nests more than ${MAX_RESULT_DEPTH} levels deep, more than this sandbox can receive`,
        MAX_RESULT_DEPTH,
        4,
      ])
    },
  )

  s.it(
    `arguments nested deeper than MAX_VALUE_DEPTH (${MAX_VALUE_DEPTH}) reject that call as INVALID_ARGS ` +
      'before the host sees it; at the bound they arrive',
    async () => {
      const seen: number[] = []
      const depthOf = (v: JsonValue): number => {
        let d = 0
        for (let x: JsonValue | undefined = v; Array.isArray(x); x = x[0]) d++
        return d
      }
      const r = await s.run(
        `const nest = (depth) => { let v = []; for (let i = 1; i < depth; i++) v = [v]; return v }
      let outcome
      try { await tools.echo({ a: nest(100000) }); outcome = 'sent' } catch (e) { outcome = e instanceof ToolCallError ? [e.code, e.message] : 'other: ' + String(e) }
      const fits = await tools.echo(nest(${MAX_VALUE_DEPTH}))
      return [outcome, fits]`,
        { call: async (_name, args) => (seen.push(depthOf(args)), seen.length), bindings: ['echo'] },
      )
      expect(r.error).toBeUndefined()
      expect(r.value).toEqual([
        [
          'INVALID_ARGS',
          `arguments are not lossless JSON: arguments is nested more than ${MAX_VALUE_DEPTH} levels deep`,
        ],
        1,
      ])
      expect(seen).toEqual([MAX_VALUE_DEPTH])
    },
  )

  s.it('an uncaught ToolCallError fails the run as an exception', async () => {
    const r = await s.run('await tools.fail({})', { call: () => Promise.reject(new Error('nope')) })
    expect(r.error?.kind).toBe('exception')
    expect(r.error?.message).toMatch(/ToolCallError: nope/)
  })
}
