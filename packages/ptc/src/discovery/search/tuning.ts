/** The ranking's knobs, one place; the benchmark turns them off one by one to measure each step. */
export interface SearchTuning {
  /** Porter stems instead of whole words. */
  readonly stem: boolean
  /** BM25F weight of each field: name words, description, parameter names, parameter descriptions. */
  readonly weights: readonly [number, number, number, number]
  /** BM25F length normalisation of each field. */
  readonly b: readonly [number, number, number, number]
  readonly k1: number
  /** Spell out short forms (`repo`, `pr`) on both sides. */
  readonly abbreviations: boolean
  /** Weight of a query word's synonyms (0: no expansion). */
  readonly synonymWeight: number
  /** Weight of a synonym that heads its group (`get`, `create`, `delete`: what APIs name operations with). */
  readonly headWeight: number
  /** Query words of one synonym group count as one word (`open a new issue`: `open` and `new`). */
  readonly mergeSynonyms: boolean
  /** Exponent of the share of query words a tool matches (0: plain sum). */
  readonly coverage: number
}

export const DEFAULT_TUNING: SearchTuning = {
  stem: true,
  abbreviations: true,
  weights: [5, 1, 0.3, 0.15],
  b: [0.75, 0.75, 0.75, 0.75],
  k1: 1.2,
  synonymWeight: 0.3,
  headWeight: 1,
  mergeSynonyms: true,
  coverage: 1,
}
