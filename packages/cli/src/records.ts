/** A JSON-like object (not null, not an array): what the CLI reads fields of in values it did not make. */
export const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value)
