export type { JsonSchemaNode, JsonSchemaScalar, JsonSchemaType, ObjectJsonSchema } from './json-schema.js'
export { assertObjectJsonSchema, assertSupportedJsonSchema } from './json-schema.js'
export { compileJsonSchema, validateJsonSchemaValue, type CompiledValidator } from './validate.js'
export type {
  ArrayValueSchemaSpec,
  BooleanValueSchemaSpec,
  IntegerValueSchemaSpec,
  JsonValueSchemaSpec,
  NullValueSchemaSpec,
  NumberValueSchemaSpec,
  ObjectValueSchemaSpec,
  OneOfValueSchemaSpec,
  ParameterPropertySpec,
  ParameterSchemaSpec,
  PropertySchemaSpec,
  ReadonlyJsonValue,
  SchemaAnnotations,
  StringValueSchemaSpec,
  ValueSchemaSpec,
} from './dsl.js'
export type { InferArgs, InferValue } from './infer.js'
export { parameterSchemaSpecToJsonSchema, valueSchemaSpecToJsonSchema } from './to-json-schema.js'
export { defineTool, validateArgs, type TypedToolDefinition, type TypedToolOutput } from './define-tool.js'
export {
  convertJsonSchema,
  convertObjectJsonSchema,
  type ConvertedObjectSchema,
  type ConvertedSchema,
  type ConvertOptions,
  type SchemaWarning,
} from './convert/convert.js'
