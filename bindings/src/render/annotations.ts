import { _asArray, _asRecord, _at, _has, _length, _own } from './_safe.js'
import { _compactJson } from './compact-json.js'
import { _commentLines } from './jsdoc.js'

const VALUE_BUDGET = 160
const MAX_EXAMPLES = 3

/**
 * Safe JSDoc lines for a node's annotations, compactly: the title, the description, then
 * `@default <json>` and up to three `@example <json>` (one-line JSON, at most 160 characters
 * each). Non-string titles and descriptions and non-JSON values are left out. Internal.
 */
export function _annotationLines(node: unknown): string[] {
  const record = _asRecord(node)
  if (record === undefined) return []
  const lines: string[] = []
  for (const key of ['title', 'description']) {
    const text = _own(record, key)
    if (typeof text === 'string' && text.trim() !== '') lines.push(..._commentLines(text))
  }
  if (_has(record, 'default')) {
    const text = _compactJson(_own(record, 'default'), VALUE_BUDGET)
    if (text !== undefined) lines.push(..._commentLines(`@default ${text}`))
  }
  if (_has(record, 'examples')) {
    const examples = _own(record, 'examples')
    const list = _asArray(examples)
    const values: unknown[] = []
    if (list === undefined) values.push(examples)
    else for (let i = 0; i < Math.min(_length(list), MAX_EXAMPLES); i++) values.push(_at(list, i))
    for (const value of values) {
      const text = _compactJson(value, VALUE_BUDGET)
      if (text !== undefined) lines.push(..._commentLines(`@example ${text}`))
    }
  }
  return lines
}
