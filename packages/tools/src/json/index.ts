export type { JsonArray, JsonObject, JsonValue } from './types.js'
export { MAX_JSON_CHARS, snapshotJson, snapshotJsonOrThrow, type SnapshotJsonResult } from './snapshot.js'
export { parseJsonArguments, type ParseJsonResult } from './parse.js'
export { prettyJson } from './pretty.js'
