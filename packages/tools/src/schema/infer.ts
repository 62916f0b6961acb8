import type { JsonValue } from '../json/types.js'
import type { ValueSchemaSpec } from './dsl.js'

/** Container levels inferred exactly before falling back to `JsonValue`. */
type MaxDepth = 16

/** Flattens an intersection into one object type (for readable hovers and exact checks). */
type Simplify<T> = { [K in keyof T]: T[K] } & {}

/** A scalar spec's type, narrowed by a literal `const` or `enum` when present. */
type InferScalar<S, T> = S extends { const: infer C extends T }
  ? C
  : S extends { enum: readonly (infer E extends T)[] }
    ? E
    : T

/** Keys whose property spec carries `required: true`. */
type RequiredKeys<P> = { [K in keyof P]-?: P[K] extends { required: true } ? K : never }[keyof P] & string

/** Keys without `required: true`. */
type OptionalKeys<P> = Exclude<keyof P & string, RequiredKeys<P>>

/** A property map's object type: required and optional string keys (a widened map is any JSON record). */
type InferProperties<P, D extends unknown[]> = string extends keyof P
  ? { [key: string]: JsonValue }
  : Simplify<
      { -readonly [K in RequiredKeys<P>]: InferValueAt<P[K], D> } & {
        -readonly [K in OptionalKeys<P>]?: InferValueAt<P[K], D>
      }
    >

/** `additionalProperties: false` is exact; anything else also admits extra JSON keys. */
type InferObject<S, D extends unknown[]> = S extends { additionalProperties: false }
  ? S extends { properties: infer P }
    ? InferProperties<P, D>
    : Record<string, never>
  : S extends { properties: infer P }
    ? InferProperties<P, D> & { [key: string]: JsonValue }
    : { [key: string]: JsonValue }

/**
 * `D` counts the containers entered so far. A widened spec (the whole
 * `ValueSchemaSpec` union, as seen while a generic is unresolved) is `JsonValue`
 * at once, which keeps instantiation shallow.
 */
type InferValueAt<S, D extends unknown[]> = [ValueSchemaSpec] extends [S] ? JsonValue : InferNode<S, D>

type InferNode<S, D extends unknown[]> = S extends { oneOf: infer B extends readonly unknown[] }
  ? InferValueAt<B[number], D>
  : S extends { type: infer T }
    ? T extends 'string'
      ? InferScalar<S, string>
      : T extends 'number' | 'integer'
        ? InferScalar<S, number>
        : T extends 'boolean'
          ? InferScalar<S, boolean>
          : T extends 'null'
            ? null
            : T extends 'array' | 'object'
              ? D['length'] extends MaxDepth
                ? JsonValue
                : T extends 'array'
                  ? S extends { items: infer I }
                    ? InferValueAt<I, [...D, unknown]>[]
                    : JsonValue[]
                  : InferObject<S, [...D, unknown]>
              : JsonValue
    : JsonValue

/**
 * Infer the TypeScript value accepted by an author-facing value schema. Exact
 * inference is bounded to 16 container levels, then falls back to `JsonValue`.
 * Literal `enum`/`const` types are preserved; `oneOf` is a union; `json` is
 * `JsonValue`; `additionalProperties: true` objects also carry
 * `{ [key: string]: JsonValue }`.
 */
export type InferValue<S> = InferValueAt<S, []>

/** Infer the TypeScript argument object for an implicit parameter schema (the root counts as one container level). */
export type InferArgs<P> = InferProperties<P, [unknown]>
