import type { JsonValue } from '../json/types.js'

/**
 * The author-facing schema DSL: one vocabulary for typed tool parameters and
 * typed output values. Specs compile to the enforced raw JSON Schema subset
 * (`valueSchemaSpecToJsonSchema`, `parameterSchemaSpecToJsonSchema`) and infer
 * TypeScript types (`InferValue`, `InferArgs`). Arrays in specs may be readonly
 * (so `const` type parameters infer literal types).
 */

/** Annotations any spec may carry; ignored by validation, required to be lossless JSON. */
export interface SchemaAnnotations {
  description?: string
  title?: string
  default?: JsonValue | ReadonlyJsonValue
  examples?: JsonValue | ReadonlyJsonValue
}

/** A JSON value whose containers may be readonly (what `const` inference produces). */
export type ReadonlyJsonValue =
  | null
  | boolean
  | number
  | string
  | readonly ReadonlyJsonValue[]
  | { readonly [key: string]: ReadonlyJsonValue }

/** `{ type: 'string' }`, optionally restricted by `enum` or `const` (not both). */
export interface StringValueSchemaSpec extends SchemaAnnotations {
  type: 'string'
  enum?: readonly string[]
  const?: string
}

/** `{ type: 'number' }`: any finite number other than -0. */
export interface NumberValueSchemaSpec extends SchemaAnnotations {
  type: 'number'
  enum?: readonly number[]
  const?: number
}

/** `{ type: 'integer' }`: `Number.isInteger`; enum/const entries must be integers. */
export interface IntegerValueSchemaSpec extends SchemaAnnotations {
  type: 'integer'
  enum?: readonly number[]
  const?: number
}

/** `{ type: 'boolean' }`. */
export interface BooleanValueSchemaSpec extends SchemaAnnotations {
  type: 'boolean'
  enum?: readonly boolean[]
  const?: boolean
}

/** `{ type: 'null' }`. */
export interface NullValueSchemaSpec extends SchemaAnnotations {
  type: 'null'
  enum?: readonly null[]
  const?: null
}

/** `{ type: 'array', items? }`; without `items` any JSON item is accepted. */
export interface ArrayValueSchemaSpec extends SchemaAnnotations {
  type: 'array'
  items?: ValueSchemaSpec
}

/** One property of an object spec (or of the parameter root): `required: true` marks it required. */
export type PropertySchemaSpec = ValueSchemaSpec & { required?: true }

/** `{ type: 'object', properties?, additionalProperties }`: openness is always explicit. */
export interface ObjectValueSchemaSpec extends SchemaAnnotations {
  type: 'object'
  properties?: { readonly [key: string]: PropertySchemaSpec }
  /** `false` rejects undeclared keys; `true` accepts any lossless-JSON extra keys. Mandatory. */
  additionalProperties: boolean
}

/** Author-only `{ type: 'json' }`: any lossless JSON; compiles to an annotation-only node. */
export interface JsonValueSchemaSpec extends SchemaAnnotations {
  type: 'json'
}

/** `{ oneOf: [a, b, ...] }`: at least two branches, exactly one must match. */
export interface OneOfValueSchemaSpec extends SchemaAnnotations {
  oneOf: readonly [ValueSchemaSpec, ValueSchemaSpec, ...ValueSchemaSpec[]]
}

/** One author-facing schema for any lossless JSON value root. */
export type ValueSchemaSpec =
  | StringValueSchemaSpec
  | NumberValueSchemaSpec
  | IntegerValueSchemaSpec
  | BooleanValueSchemaSpec
  | NullValueSchemaSpec
  | ArrayValueSchemaSpec
  | ObjectValueSchemaSpec
  | JsonValueSchemaSpec
  | OneOfValueSchemaSpec

/** One implicit parameter-root property, optionally required. */
export type ParameterPropertySpec = ValueSchemaSpec & { required?: true }

/**
 * Tool parameter schema. The map itself is an implicit open object root;
 * requiredness remains a per-property `required: true` annotation.
 */
export type ParameterSchemaSpec = {
  [key: string]: ParameterPropertySpec
  [key: symbol]: never
}
