import { JsonSchemaError, type Violation } from '../errors.js'
import { snapshotJson } from '../json/snapshot.js'
import type { JsonValue } from '../json/types.js'
import { _checkJsonSchemaTree } from './check.js'

/** Scalar JSON values supported by `enum` and `const`. */
export type JsonSchemaScalar = string | number | boolean | null

/** Single-type keywords accepted by the enforced subset. */
export type JsonSchemaType = 'object' | 'array' | 'string' | 'number' | 'integer' | 'boolean' | 'null'

/**
 * One raw JSON Schema node in the enforced subset. The optional fields express
 * the external wire schema; {@link assertSupportedJsonSchema} rejects invalid
 * combinations before a caller treats the node as trusted.
 */
export interface JsonSchemaNode {
  /** Omit with no constraints for any JSON value, or use `oneOf`. */
  type?: JsonSchemaType
  /** Exactly one branch must validate; at least two branches are required. */
  oneOf?: JsonSchemaNode[]
  /** Nested property schemas (`type: 'object'` only). */
  properties?: Record<string, JsonSchemaNode>
  /** Required property names; each must appear in `properties`. */
  required?: string[]
  /** `false` rejects undeclared keys; absent/`true` follows JSON Schema's open default. */
  additionalProperties?: boolean
  /** Item schema (`type: 'array'` only); absent accepts any JSON item. */
  items?: JsonSchemaNode
  /** Allowed values for a scalar node. */
  enum?: JsonSchemaScalar[]
  /** The single allowed value for a scalar node. */
  const?: JsonSchemaScalar
  /** Annotation, ignored for validation. */
  description?: string
  /** Annotation, ignored for validation. */
  title?: string
  /** Annotation, ignored for validation but required to be lossless JSON. */
  default?: JsonValue
  /** Annotation, ignored for validation but required to be lossless JSON. */
  examples?: JsonValue
}

/** A consumer-constrained object-rooted schema. */
export type ObjectJsonSchema = JsonSchemaNode & { type: 'object' }

/**
 * Every violation of the enforced subset in `schema`, after materializing it as
 * lossless JSON. Returns the frozen checked copy when there are none. Internal.
 */
export function _inspectJsonSchema(schema: unknown): {
  violations: Violation[]
  schema: JsonSchemaNode | undefined
  json: JsonValue | undefined
} {
  const snapshot = snapshotJson(schema)
  if (!snapshot.ok)
    return { violations: [{ path: snapshot.path, message: snapshot.message }], schema: undefined, json: undefined }
  const violations = _checkJsonSchemaTree(snapshot.value)
  return {
    violations,
    schema: violations.length === 0 ? (snapshot.value as JsonSchemaNode) : undefined,
    json: snapshot.value,
  }
}

/**
 * Materializes and checks a raw schema, returning its frozen copy (what compile
 * and validation then read). Throws {@link JsonSchemaError} listing every bad
 * path. Internal.
 */
export function _toSupportedJsonSchema(schema: unknown, prefix?: string): JsonSchemaNode {
  const { violations, schema: checked } = _inspectJsonSchema(schema)
  if (checked === undefined) throw new JsonSchemaError(violations, prefix)
  return checked
}

/**
 * Asserts that `schema` (any value) is a node of the enforced raw JSON Schema
 * subset: `type` (one string), `oneOf` (>= 2 branches, without `type`),
 * `properties`/`required`/`additionalProperties` (boolean) on `type: 'object'`,
 * `items` on `type: 'array'`, type-correct `enum`/`const` on scalar types, and the
 * annotations `description`, `title`, `default`, `examples`. Any other keyword or
 * combination is rejected, never ignored. The schema must itself be lossless JSON.
 * Iterative.
 * @throws JsonSchemaError listing every bad path (JSON pointers into the schema).
 */
export function assertSupportedJsonSchema(schema: unknown): asserts schema is JsonSchemaNode {
  _toSupportedJsonSchema(schema)
}

/**
 * {@link assertSupportedJsonSchema}, and the root must be `type: 'object'`.
 * @throws JsonSchemaError listing every bad path, the root's type included.
 */
export function assertObjectJsonSchema(schema: unknown): asserts schema is ObjectJsonSchema {
  const { violations, json } = _inspectJsonSchema(schema)
  const type = typeof json === 'object' && json !== null && !Array.isArray(json) ? json['type'] : undefined
  if (json !== undefined && type !== 'object' && !violations.some((v) => v.path === '' || v.path === '/type')) {
    violations.unshift({ path: '/type', message: "the root schema must be type: 'object'" })
  }
  if (violations.length > 0) throw new JsonSchemaError(violations)
}
