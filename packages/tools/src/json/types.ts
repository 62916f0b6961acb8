/** Any lossless JSON value: the only data that crosses the tool pipeline. */
export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue }

/** A JSON object (a plain record of JSON values). */
export type JsonObject = { [key: string]: JsonValue }

/** A JSON array. */
export type JsonArray = JsonValue[]
