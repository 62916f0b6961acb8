import { createRequire } from 'node:module'
import type { Options, Pattern, Program, Statement, VariableDeclaration } from 'acorn'

/** acorn, loaded by the first session program (most runs are not in a session). */
let acorn: typeof import('acorn') | undefined
function parse(body: string, options: Options): Program {
  acorn ??= createRequire(import.meta.url)('acorn') as typeof import('acorn')
  return acorn.parse(body, options)
}

/**
 * Session programs (REPL semantics): the top-level declarations of a program become global
 * variables, so the next program of the session sees them.
 *
 * `wrapSessionProgram(body)` replaces `(async function () {\n<body>\n})`. Line 1 holds everything
 * added (`var <names>;` before the wrapper, `this.f = f;` right after `{`); the body keeps its lines.
 * Only direct children of the body are rewritten:
 * - `let`/`const`/`var` declarations become assignments to the globals. The keyword is replaced by
 *   `;` padded with spaces to its length (`;(` when the first target is an object pattern, with `)`
 *   inserted after the last declarator), and `;` is appended when the statement ended without one
 *   (so the rewritten statement never merges with its neighbours). A `let` declarator without
 *   initializer gains ` = void 0` (redeclaring resets); a `var` one is replaced by `0` padded to the
 *   name's length (the existing value stays). `const` is not enforced afterwards.
 * - `class C {…}` becomes `C = class C {…};`.
 * - `function` declarations stay (hoisted within the program) and are published at the start of
 *   the program, `this.f = f;`: on line 1, or after the directive prologue, on its last line.
 *
 * Column shifts (only on rewritten lines): text after the last declarator of an object-pattern
 * declaration, +1 (`)`); text after a `let x` without initializer, +9; text after a declaration or a
 * class that ended without `;`, +1 (normally nothing, the line ended there); a class's first line,
 * +name.length+3 from the `class` keyword on, and the text after its `}`, +1; text after the last
 * directive, +the length of the `this.f = f;` statements.
 *
 * Kept local (declared in the program as before, not carried over): declarations naming a reserved
 * or unassignable name; a `var` declaration naming a function declared in the same program, or a
 * name also declared with `var` in a nested statement (the rewritten assignment would hit the
 * program's own binding); a whole `let`/`const`/`var` declaration as soon as one of its names is kept
 * local (the rule is applied until nothing changes); `using` declarations.
 */

/** A word that can start a declaration (`let` and `using` included; a false positive only costs a parse). */
const DECLARATION_WORD = /\b(?:const|let|var|function|class|using)\b/

/** Names no program may turn into a session global, whatever the caller reserves. */
const UNASSIGNABLE: readonly string[] = ['undefined', 'NaN', 'Infinity', 'globalThis', 'eval', 'arguments']

const PARSE_OPTIONS: Options = {
  ecmaVersion: 'latest',
  sourceType: 'script',
  allowAwaitOutsideFunction: true,
  allowReturnOutsideFunction: true,
  allowHashBang: false,
  locations: true,
}

/** What the model is told about session programs (goes into the SDK prompt). */
export const SESSION_GUIDANCE: string =
  'Programs in a session share state: top-level declarations (const, let, var, function, class) and properties set ' +
  'on globalThis ' +
  'stay available to the later programs of the session as the same values (by reference, not JSON copies). ' +
  'Declarations nested in blocks, loops or functions stay local to their program. ' +
  'A top-level const becomes reassignable and can be redeclared by a later program, and using a top-level name ' +
  'before its declaration ' +
  "in the same program reads the earlier program's value (or undefined) instead of throwing. " +
  '`tools`, `console` and `ToolCallError` cannot be redefined across programs: declaring one only shadows it inside ' +
  'that program.'

interface Edit {
  readonly at: number
  readonly remove: number
  readonly text: string
}

/**
 * The wrapped source of a session program, or undefined when acorn cannot parse the body (the caller then
 * wraps it as usual and lets the engine report the syntax error). A body without any declaration word
 * is not parsed: it is the plain wrapper.
 */
export function wrapSessionProgram(body: string, options?: { reserved?: readonly string[] }): string | undefined {
  // No declaration keyword anywhere, no top-level declaration: the plain wrapper, without a parse.
  if (!DECLARATION_WORD.test(body)) return `(async function () {\n${body}\n})`
  let program: Program
  try {
    program = parse(body, PARSE_OPTIONS)
  } catch {
    return undefined
  }
  const statements = program.body.filter(
    (s): s is Statement => !s.type.startsWith('Import') && !s.type.startsWith('Export'),
  )
  const excluded = new Set([...UNASSIGNABLE, ...(options?.reserved ?? [])])
  const prologue = directivePrologue(statements)
  const strict = prologue.some((s) => s.type === 'ExpressionStatement' && s.directive === 'use strict')
  const local = localNames(statements, excluded, strict)

  const globals = new Set<string>()
  const published: string[] = []
  const edits: Edit[] = []
  for (const s of statements) {
    if (s.type === 'FunctionDeclaration') {
      if (excluded.has(s.id.name)) continue
      if (!globals.has(s.id.name)) published.push(s.id.name)
      globals.add(s.id.name)
    } else if (s.type === 'ClassDeclaration') {
      if (local.has(s.id.name)) continue
      globals.add(s.id.name)
      edits.push({ at: s.start, remove: 0, text: `${s.id.name} = ` }, { at: s.end, remove: 0, text: ';' })
    } else if (s.type === 'VariableDeclaration' && isRewritable(s)) {
      const names = declaredNames(s)
      if (names.some((n) => local.has(n))) continue
      for (const n of names) globals.add(n)
      rewriteDeclaration(body, s, edits)
    }
  }

  const publish = published.map((n) => `this.${n} = ${n};`).join('')
  const last = prologue.at(-1)
  if (last !== undefined && publish !== '') {
    edits.push({ at: last.end, remove: 0, text: (body[last.end - 1] === ';' ? '' : ';') + publish })
  }
  const head =
    (globals.size === 0 ? '' : `var ${[...globals].join(', ')};`) +
    '(async function () {' +
    (last === undefined ? publish : '')
  return `${head}\n${applyEdits(body, edits)}\n})`
}

function isRewritable(d: VariableDeclaration): d is VariableDeclaration & { kind: 'var' | 'let' | 'const' } {
  return d.kind === 'var' || d.kind === 'let' || d.kind === 'const'
}

/** Rewrites a top-level `let`/`const`/`var` declaration into an assignment statement, columns kept. */
function rewriteDeclaration(body: string, d: VariableDeclaration, edits: Edit[]): void {
  const first = d.declarations[0]
  const lastDeclarator = d.declarations.at(-1)
  if (first === undefined || lastDeclarator === undefined) return
  const paren = first.id.type === 'ObjectPattern'
  const opener = paren ? ';(' : ';'
  edits.push({ at: d.start, remove: d.kind.length, text: opener.padEnd(d.kind.length, ' ') })
  for (const declarator of d.declarations) {
    if (declarator.init != null) continue
    if (d.kind === 'var') {
      // `var x` without initializer: the global keeps its value; `0` reads nothing.
      edits.push({
        at: declarator.id.start,
        remove: declarator.id.end - declarator.id.start,
        text: '0'.padEnd(declarator.id.end - declarator.id.start, ' '),
      })
    } else {
      edits.push({ at: declarator.id.end, remove: 0, text: ' = void 0' })
    }
  }
  if (paren) edits.push({ at: lastDeclarator.end, remove: 0, text: ')' })
  if (body[d.end - 1] !== ';') edits.push({ at: d.end, remove: 0, text: ';' })
}

function applyEdits(body: string, edits: readonly Edit[]): string {
  // Stable sort: edits at one position keep the order they were made in (`)` before `;`).
  const sorted = edits.map((e, i) => ({ e, i })).sort((a, b) => a.e.at - b.e.at || a.i - b.i)
  let out = ''
  let pos = 0
  for (const { e } of sorted) {
    out += body.slice(pos, e.at) + e.text
    pos = e.at + e.remove
  }
  return out + body.slice(pos)
}

/** The leading statements acorn marks as directives (`'use strict'`…). */
function directivePrologue(statements: readonly Statement[]): Statement[] {
  const prologue: Statement[] = []
  for (const s of statements) {
    if (s.type !== 'ExpressionStatement' || typeof s.directive !== 'string') break
    prologue.push(s)
  }
  return prologue
}

/** Names declared by a declaration (any pattern depth), in source order. */
function declaredNames(d: VariableDeclaration): string[] {
  const names: string[] = []
  const stack: Pattern[] = d.declarations.map((x) => x.id).reverse()
  for (let p = stack.pop(); p !== undefined; p = stack.pop()) {
    switch (p.type) {
      case 'Identifier':
        names.push(p.name)
        break
      case 'ObjectPattern':
        for (let i = p.properties.length - 1; i >= 0; i--) {
          const prop = p.properties[i]
          if (prop !== undefined) stack.push(prop.type === 'RestElement' ? prop.argument : prop.value)
        }
        break
      case 'ArrayPattern':
        for (let i = p.elements.length - 1; i >= 0; i--) {
          const el = p.elements[i]
          if (el != null) stack.push(el)
        }
        break
      case 'AssignmentPattern':
        stack.push(p.left)
        break
      case 'RestElement':
        stack.push(p.argument)
        break
      default:
        break
    }
  }
  return names
}

/**
 * The names whose top-level declarations stay local: the excluded names, `var` names the function
 * scope gets from nested statements (and, in sloppy code, nested function declarations), the names
 * of top-level functions (for a `var` redeclaring one), then every name of a declaration that
 * touches one of them, until nothing changes.
 */
function localNames(statements: readonly Statement[], excluded: ReadonlySet<string>, strict: boolean): Set<string> {
  const local = new Set(excluded)
  const stack: Statement[] = []
  for (const s of statements) {
    if (s.type === 'FunctionDeclaration') local.add(s.id.name)
    else if (s.type !== 'VariableDeclaration' && s.type !== 'ClassDeclaration') stack.push(s)
  }
  for (let s = stack.pop(); s !== undefined; s = stack.pop()) {
    switch (s.type) {
      case 'VariableDeclaration':
        if (s.kind === 'var') for (const n of declaredNames(s)) local.add(n)
        break
      case 'FunctionDeclaration':
        if (!strict) local.add(s.id.name)
        break
      case 'BlockStatement':
        stack.push(...s.body)
        break
      case 'IfStatement':
        stack.push(s.consequent)
        if (s.alternate != null) stack.push(s.alternate)
        break
      case 'ForStatement':
        if (s.init?.type === 'VariableDeclaration') stack.push(s.init)
        stack.push(s.body)
        break
      case 'ForInStatement':
      case 'ForOfStatement':
        if (s.left.type === 'VariableDeclaration') stack.push(s.left)
        stack.push(s.body)
        break
      case 'WhileStatement':
      case 'DoWhileStatement':
      case 'LabeledStatement':
      case 'WithStatement':
        stack.push(s.body)
        break
      case 'TryStatement':
        stack.push(s.block)
        if (s.handler != null) stack.push(s.handler.body)
        if (s.finalizer != null) stack.push(s.finalizer)
        break
      case 'SwitchStatement':
        for (const c of s.cases) stack.push(...c.consequent)
        break
      default:
        break
    }
  }
  const declarations = statements.filter((s): s is VariableDeclaration => s.type === 'VariableDeclaration')
  for (let changed = true; changed; ) {
    changed = false
    for (const d of declarations) {
      const names = declaredNames(d)
      if (!isRewritable(d) || names.some((n) => local.has(n))) {
        for (const n of names) {
          if (!local.has(n)) {
            local.add(n)
            changed = true
          }
        }
      }
    }
  }
  return local
}
