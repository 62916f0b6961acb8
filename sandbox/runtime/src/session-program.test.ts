import { parse } from 'acorn'
import vm from 'node:vm'
import { describe, expect, it } from 'vitest'
import { PROGRAM_FILENAME, wrapProgram } from './program.js'
import { SESSION_GUIDANCE, wrapSessionProgram } from './session-program.js'

const RESERVED = ['tools', 'console', 'ToolCallError'] as const

function newlines(text: string): number {
  return text.split('\n').length - 1
}

/** The session source of `body`; every case goes through here: same newlines as the plain wrapper, parses as a script. */
function wrapped(body: string, reserved: readonly string[] = RESERVED): string {
  const source = wrapSessionProgram(body, { reserved })
  if (source === undefined) throw new Error(`acorn rejected the test program:\n${body}`)
  expect(newlines(source)).toBe(newlines(wrapProgram(body)))
  expect(() => parse(source, { ecmaVersion: 'latest', sourceType: 'script' })).not.toThrow()
  return source
}

type ProgramFunction = (this: unknown) => Promise<unknown>

/** A fresh context whose programs run as the engine runs them: the script gives the function, called with `this` = the global. */
function session(reserved: readonly string[] = RESERVED) {
  const ctx = vm.createContext({
    tools: { echo: (x: unknown) => x },
    console: { log: () => undefined },
    ToolCallError: class ToolCallError extends Error {},
  })
  const global: unknown = vm.runInContext('globalThis', ctx)
  return {
    global: global as Record<string, unknown>,
    run(body: string): Promise<unknown> {
      const fn = new vm.Script(wrapped(body, reserved), { filename: PROGRAM_FILENAME }).runInContext(
        ctx,
      ) as ProgramFunction
      return fn.call(global)
    },
  }
}

/** What a rejected program threw (errors come from the context's realm: no `instanceof` here). */
async function thrown(p: Promise<unknown>): Promise<{ name: string; message: string; stack: string }> {
  try {
    await p
  } catch (e) {
    const err = e as { name?: unknown; message?: unknown; stack?: unknown }
    return { name: String(err.name), message: String(err.message), stack: String(err.stack) }
  }
  throw new Error('the program did not throw')
}

/** The first `ptc-program.js:L:C` of a stack. */
function position(stack: string): { line: number; column: number } {
  const m = /ptc-program\.js:(\d+):(\d+)/.exec(stack)
  if (m === null) throw new Error(`no program position in ${stack}`)
  return { line: Number(m[1]), column: Number(m[2]) }
}

/** Where an error thrown by `body` is reported with the plain wrapper. */
async function plainPosition(body: string): Promise<{ line: number; column: number }> {
  const ctx = vm.createContext({})
  const fn = new vm.Script(wrapProgram(body), { filename: PROGRAM_FILENAME }).runInContext(ctx) as ProgramFunction
  return position((await thrown(fn.call(vm.runInContext('globalThis', ctx)))).stack)
}

describe('wrapSessionProgram: declarations carry over', () => {
  it('const, let and var declared in one program are globals the next program reads', async () => {
    const s = session()
    await s.run('const a = 1\nlet b = 2\nvar c = 3')
    expect(await s.run('return [a, b, c]')).toEqual([1, 2, 3])
    expect([s.global.a, s.global.b, s.global.c]).toEqual([1, 2, 3])
  })

  it('values carry over by reference, not as copies', async () => {
    const s = session()
    await s.run('const obj = { n: 1 }\nglobalThis.alias = obj')
    expect(await s.run('obj.n++\nreturn alias === obj && alias.n')).toBe(2)
  })

  it('a function called before its declaration line is published for the next program', async () => {
    const s = session()
    await s.run(
      'const v = twice(2)\nfunction twice(n) { return n * 2 }\nasync function later() { return v }\nfunction* gen() { yield 1 }\nasync function* agen() { yield 2 }',
    )
    expect(
      await s.run(
        'const g = gen()\nconst out = []\nfor await (const x of agen()) out.push(x)\nreturn [v, twice(5), await later(), g.next().value, out[0]]',
      ),
    ).toEqual([4, 10, 4, 1, 2])
  })

  it('a class is a global the next program can `new`, keeping its name', async () => {
    const s = session()
    await s.run('class Counter { n = 0; inc() { return ++this.n } }')
    expect(
      await s.run('const c = new Counter()\nc.inc()\nreturn [c.inc(), Counter.name, c instanceof Counter]'),
    ).toEqual([2, 'Counter', true])
  })

  it('destructuring of any depth, with defaults and rest, assigns every name', async () => {
    const s = session()
    await s.run(
      "const {a, b: [c = 1, ...d]} = { a: 'A', b: [undefined, 2, 3] }, e = 2\nlet [[f] = [9], { g, ...h }] = [undefined, { g: 'G', i: 1, j: 2 }]",
    )
    expect(await s.run('return JSON.stringify([a, c, d, e, f, g, h])')).toBe('["A",1,[2,3],2,9,"G",{"i":1,"j":2}]')
  })

  it('redeclaring a const in a later program works and overwrites it', async () => {
    const s = session()
    await s.run('const x = 1')
    expect(await s.run('const x = 2\nreturn x')).toBe(2)
    expect(await s.run('x = 3\nreturn x')).toBe(3)
  })

  it('a program that throws after its first declaration keeps that one', async () => {
    const s = session()
    const err = await thrown(s.run("const kept = 1\nthrow new Error('stop')\nconst lost = 2"))
    expect(err.message).toBe('stop')
    expect(await s.run("return [kept, lost, 'lost' in globalThis]")).toEqual([1, undefined, true])
  })

  it('return still returns the value', async () => {
    const s = session()
    expect(await s.run('const r = 21\nreturn r * 2')).toBe(42)
  })

  it('top-level await works between declarations', async () => {
    const s = session()
    await s.run('const a1 = await Promise.resolve(1)\nawait null\nlet a2 = a1 + (await Promise.resolve(1))')
    expect(await s.run('return a1 + a2')).toBe(3)
  })

  it("'use strict' stays in force and functions are still published", async () => {
    const s = session()
    const err = await thrown(s.run("'use strict'\nfunction early() { return 'e' }\nundeclaredName = 1"))
    expect(err.name).toBe('ReferenceError')
    expect(
      await s.run(
        "'use strict';\nreturn early() + helper()\nfunction helper() { return this === undefined ? 'strict' : 'sloppy' }",
      ),
    ).toBe('estrict')
    expect(await s.run('return early()')).toBe('e')
  })

  it('nested declarations are not leaked', async () => {
    const s = session()
    await s.run(
      '{ const n1 = 1 }\nif (true) { let n2 = 2; var n3 = 3 }\nfor (let n4 = 0; n4 < 1; n4++) {}\nfunction outer() { var n5 = 5 }\nlbl: { var n6 = 6 }\ntry { var n7 = 7 } catch {}',
    )
    expect(await s.run("return ['n1', 'n2', 'n3', 'n4', 'n5', 'n6', 'n7'].map((n) => n in globalThis)")).toEqual([
      false,
      false,
      false,
      false,
      false,
      false,
      false,
    ])
  })

  it('a top-level var also declared in a nested statement stays local (its assignment would hit the local binding)', async () => {
    const s = session()
    expect(await s.run('var q = 1\nif (q) { var q }\nreturn q')).toBe(1)
    expect(await s.run("return 'q' in globalThis")).toBe(false)
    // Sloppy code: a function declared in a block also gives the program a `nf` binding (Annex B).
    expect(await s.run('if (true) { function nf() {} }\nvar nf = 2\nreturn nf')).toBe(2)
    expect(await s.run("return 'nf' in globalThis")).toBe(false)
  })

  it('reserved names stay local to the program, and so does a whole declaration touching one', async () => {
    const s = session()
    expect(
      await s.run(
        "const tools = 'mine'\nfunction console() {}\nclass ToolCallError {}\nvar [z, ToolCallError2] = [1, 2]\nreturn typeof tools",
      ),
    ).toBe('string')
    expect(await s.run('let [console, zz] = [1, 2]\nreturn console + zz')).toBe(3)
    expect(
      await s.run("return [typeof tools.echo, typeof console.log, ToolCallError.name, typeof zz, 'z' in globalThis]"),
    ).toEqual(['function', 'function', 'ToolCallError', 'undefined', true])
  })

  it('unassignable globals (undefined, NaN…) are never rewritten', async () => {
    const s = session()
    expect(await s.run('const undefined = 1\nlet NaN = 2\nreturn undefined + NaN')).toBe(3)
    expect(await s.run('return [typeof undefined, Number.isNaN(NaN)]')).toEqual(['undefined', true])
  })

  it('`var x;` keeps the earlier value, `let y;` resets it to undefined', async () => {
    const s = session()
    await s.run('var x = 5\nlet y = 6')
    expect(await s.run('var x\nlet y\nreturn [x, y]')).toEqual([5, undefined])
  })

  it('reading a name before its declaration in the same program gives the earlier value', async () => {
    const s = session()
    await s.run('const w = 1')
    expect(await s.run('const before = w\nconst w = 2\nreturn [before, w]')).toEqual([1, 2])
  })

  it('rewritten statements never merge with their neighbours (ASI)', async () => {
    const s = session()
    await s.run(
      "globalThis.t = 1\nconst {m} = { m: 3 }\nlet u\n(function () { globalThis.iife = 'ran' })()\nclass K {}\n[1, 2].forEach((n) => { globalThis.sum = (globalThis.sum ?? 0) + n })\nvar vv\n`tpl`",
    )
    expect(await s.run('return [m, u, iife, sum, typeof K]')).toEqual([3, undefined, 'ran', 3, 'function'])
  })
})

describe('wrapSessionProgram: positions', () => {
  it('an error thrown on the model line N is reported on line N+1 at the plain wrapper column', async () => {
    const body = "const a = 1\nlet {b} = { b: 2 }\nfunction f() {}\nclass C {}\n    throw new Error('boom')"
    const err = await thrown(session().run(body))
    expect(position(err.stack)).toEqual({ line: 6, column: 11 })
    expect(position(err.stack)).toEqual(await plainPosition(body))
  })

  it('an error inside a rewritten declarator keeps its column', async () => {
    const body = "const z = 1, zz = (() => { throw new Error('init') })()"
    const err = await thrown(session().run(body))
    expect(position(err.stack)).toEqual(await plainPosition(body))
    expect(position(err.stack).line).toBe(2)
  })

  it('a class line shifts by the inserted `C = ` (name length + 3), and only that line', async () => {
    const body = "class K { static x = (() => { throw new Error('k') })() }"
    const plain = await plainPosition(body)
    expect(position((await thrown(session().run(body))).stack)).toEqual({ line: plain.line, column: plain.column + 4 })
  })

  it('a body acorn rejects gives undefined; the plain wrapper then reports the syntax error on line N+1', () => {
    const body = 'const ok = 1\nlet = = 2'
    expect(wrapSessionProgram(body)).toBeUndefined()
    let stack = ''
    try {
      new vm.Script(wrapProgram(body), { filename: PROGRAM_FILENAME })
    } catch (e) {
      stack = String((e as { stack?: unknown }).stack)
    }
    expect(/ptc-program\.js:(\d+)/.exec(stack)?.[1]).toBe('3')
  })

  it('bodies the engine would reject as a function body but acorn would take are undefined too', () => {
    expect(wrapSessionProgram('#!/usr/bin/env node\nconst a = 1')).toBeUndefined()
    expect(wrapSessionProgram('})\n(function () { var x')).toBeUndefined()
  })

  it('a body without any declaration word is the plain wrapper, whatever it holds (what the caller falls back to)', () => {
    for (const body of [
      'return 1',
      'await tools.x({})\nreturn "const"',
      '#!/usr/bin/env node\n1',
      '})\n(async () => {',
    ]) {
      expect(wrapSessionProgram(body)).toBe(wrapProgram(body))
    }
  })
})

describe('wrapSessionProgram: source shape', () => {
  it('line 1 declares every top-level name once, publishes functions after `{`, and the rewrite keeps columns', () => {
    const source = wrapped('const {a, b: [c = 1, ...d]} = o, e = 2;\nvar v = 1, v\nfunction f() {}\nclass C {}')
    expect(source.split('\n')).toEqual([
      'var a, c, d, e, v, f, C;(async function () {this.f = f;',
      ';(    {a, b: [c = 1, ...d]} = o, e = 2);',
      ';   v = 1, 0;',
      'function f() {}',
      'C = class C {};',
      '})',
    ])
  })

  it('with a directive prologue, functions are published after the last directive on its line', () => {
    const source = wrapped("'use strict'\n'use asm';\nf()\nfunction f() {}")
    expect(source.split('\n').slice(0, 3)).toEqual([
      'var f;(async function () {',
      "'use strict'",
      "'use asm';this.f = f;",
    ])
  })

  it('a program without top-level declarations is the plain wrapper', () => {
    const body = 'if (x) { let y = 1 }\nreturn 2'
    expect(wrapped(body)).toBe(wrapProgram(body))
  })

  const PROGRAMS: readonly string[] = [
    '',
    '// only a comment',
    'return 1',
    'const a = 1',
    'const a = 1;',
    'let a, b = 2, c',
    'var a\nvar b;',
    'const {a, b: [c = 1, ...d]} = o, e = 2;',
    'const {\n  a,\n  b: {\n    c,\n  },\n} = o',
    'let [\n  x = 1,\n  ...rest\n] = arr',
    'x\nconst y = 1\n[y].map(String)',
    "'use strict'\nfunction f() {}\nconst g = f",
    "'use strict'; const a = 1; function f() {}",
    'class A {}\nclass B extends A {\n  m() { return B }\n}\n(0)',
    'async function f() { await 1 }\nfunction* g() {}\nasync function* h() {}',
    'const a = await fetchIt()\nawait wait(1)\nlet b = a',
    'for (let i = 0; i < 3; i++) { const j = i }\nfor (var k of []) {}',
    'label: for (;;) { break label }\nconst after = 1',
    'try { var t = 1 } catch (e) { let u } finally { const v = 2 }',
    'switch (x) { case 1: let y = 1; break }\nconst z = 2',
    'const f = () => {\n  const inner = 1\n  return inner\n}',
    'const s = `multi\nline\ntemplate ${1 + 1}`',
    "const re = /a\\/b/g, str = 'x\\\ny'",
    'let tools = 1\nconst [console, other] = [1, 2]',
    'var undefined = 1\nconst NaN = 2',
    'const a = 1 /* a\nmultiline comment */\nlet b',
    'let a = 1\nlet b = 2 // trailing\nlet c',
    'if (a) function f() {}\nvar f = 1',
    'const o = { get x() { return 1 } }, { x } = o',
    'class C { static #p = 1; static { C.q = C.#p } }\nconst q = C.q',
    'let a\n(function () {})()\nvar b\n[1].length\nclass C {}\n`t`',
    'const big = 10n ** 20n, opt = a?.b ?? c, { [key]: computed = 1 } = obj',
  ]

  it.each(PROGRAMS)('keeps the line count, parses and compiles: %j', (body) => {
    const source = wrapped(body)
    expect(() => new vm.Script(source)).not.toThrow()
    expect(source.split('\n').slice(1, -1).length).toBe(body.split('\n').length)
  })
})

describe('SESSION_GUIDANCE', () => {
  it('states what carries over and what cannot be redefined in 3 to 5 sentences', () => {
    const sentences = SESSION_GUIDANCE.split(/(?<=\.)\s+/).filter((x) => x !== '')
    expect(sentences.length).toBeGreaterThanOrEqual(3)
    expect(sentences.length).toBeLessThanOrEqual(5)
    for (const word of [
      'globalThis',
      'by reference',
      'nested',
      'const',
      'before its declaration',
      'tools',
      'console',
      'ToolCallError',
    ]) {
      expect(SESSION_GUIDANCE).toContain(word)
    }
  })
})
