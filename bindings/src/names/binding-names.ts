import { RUN_CODE } from '@ptc/tools'
import { BindingNameError, type BindingNameProblem } from '../errors.js'

const ASCII_IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/

/**
 * Whether `name` can be written bare after a dot (`tools.name`) and as a property key in a type
 * literal. Deliberately conservative: ASCII IdentifierNames only. Reserved words (`class`,
 * `delete`, …) ARE identifier names here: ES5+ allows them as property names and after a dot.
 * Non-ASCII identifiers are reported as `false` so the rendered text never depends on the
 * Unicode tables of one engine or TypeScript version; they are quoted instead.
 */
export function isIdentifierName(name: string): boolean {
  return typeof name === 'string' && ASCII_IDENTIFIER.test(name)
}

/**
 * A string literal for `value` that is valid JavaScript and TypeScript source: JSON quoting plus
 * escapes for U+2028/U+2029 (line terminators inside a TypeScript string literal). Lone
 * surrogates are escaped by `JSON.stringify` itself. Internal.
 */
export function _quote(value: string): string {
  return JSON.stringify(value)
    .replace(/\u2028/g, '\\u2028')
    .replace(/\u2029/g, '\\u2029')
}

/**
 * The property-key text for a binding or property name: bare when {@link isIdentifierName}
 * (reserved words included), JSON-quoted otherwise. `__proto__` is always quoted so a reader sees
 * that it is an ordinary key (the guest's `tools` object has a null prototype).
 */
export function bindingKey(name: string): string {
  return isIdentifierName(name) && name !== '__proto__' ? name : _quote(name)
}

/**
 * Every problem with a list of tool names to bind under `tools`: a non-string or empty name, a
 * duplicate (each later occurrence), and the reserved transport name `run_code`. Any other string
 * is bindable (`tools["github.create_issue"]`). Total: never throws.
 */
export function validateBindingNames(names: readonly unknown[]): BindingNameProblem[] {
  const problems: BindingNameProblem[] = []
  const seen = new Set<string>()
  let length = 0
  try {
    length = Array.isArray(names) ? names.length : 0
    if (!Array.isArray(names)) problems.push({ index: 0, name: '', message: 'binding names must be an array' })
  } catch {
    return [{ index: 0, name: '', message: 'binding names must be an array' }]
  }
  for (let index = 0; index < length; index++) {
    let name: unknown
    try {
      name = names[index]
    } catch {
      problems.push({ index, name: '', message: 'the entry cannot be read' })
      continue
    }
    if (typeof name !== 'string') {
      problems.push({ index, name: typeof name, message: `a binding name must be a string, got ${typeof name}` })
    } else if (name === '') {
      problems.push({ index, name, message: 'a binding name must not be empty' })
    } else if (name === RUN_CODE) {
      problems.push({ index, name, message: '`run_code` is reserved for the PTC transport and is never bound' })
    } else if (seen.has(name)) {
      problems.push({ index, name, message: `duplicate binding name ${_quote(name)}` })
    }
    if (typeof name === 'string') seen.add(name)
  }
  return problems
}

/**
 * {@link validateBindingNames}, throwing when there is any problem.
 * @throws BindingNameError listing every problem.
 */
export function assertValidBindingNames(names: readonly unknown[]): asserts names is readonly string[] {
  const problems = validateBindingNames(names)
  if (problems.length > 0) throw new BindingNameError(problems)
}
