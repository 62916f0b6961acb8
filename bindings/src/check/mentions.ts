import type * as TS from 'typescript'

/** The names a program's text could reach a tool by. */
export interface _Mentions {
  /** Every identifier and literal text: a tool of one of these names may be used (`tools.x`, `tools["x"]`, …). */
  readonly names: ReadonlySet<string>
  /** Texts in the places a tool name is written (after a dot, as a key, as a string) for "Did you mean …?". */
  readonly keys: ReadonlySet<string>
}

/** JSDoc nodes are not children of a node; in JavaScript their types (`@type {ToolOutputMap["x"]}`) count. */
const jsDocOf = (node: TS.Node): readonly TS.Node[] => ('jsDoc' in node && Array.isArray(node.jsDoc) ? node.jsDoc : [])

/**
 * The identifiers and literals of a parsed program. A superset of the tool names it uses, found without
 * types: aliases (`const t = tools`), destructuring and `ToolArgsMap["x"]` are covered because every name is.
 */
export function _programMentions(ts: typeof TS, file: TS.SourceFile): _Mentions {
  const names = new Set<string>()
  const keys = new Set<string>()
  const stack: TS.Node[] = [file]
  const push = (child: TS.Node): void => void stack.push(child)
  for (let node = stack.pop(); node !== undefined; node = stack.pop()) {
    if (ts.isIdentifier(node) || ts.isNumericLiteral(node)) names.add(node.text)
    else if (ts.isStringLiteralLike(node)) {
      names.add(node.text)
      keys.add(node.text)
    } else if (ts.isPropertyAccessExpression(node) && ts.isIdentifier(node.name)) keys.add(node.name.text)
    else if (ts.isObjectBindingPattern(node)) {
      for (const element of node.elements) {
        const key = element.propertyName ?? element.name
        if (ts.isIdentifier(key)) keys.add(key.text)
      }
    }
    ts.forEachChild(node, push)
    for (const doc of jsDocOf(node)) stack.push(doc)
  }
  return { names, keys }
}
