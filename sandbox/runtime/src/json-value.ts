/** A lossless JSON value: the only thing that crosses between host and guest. */
export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue }
