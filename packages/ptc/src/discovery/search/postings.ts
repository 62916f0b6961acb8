/** How many fields a posting packs. */
export const FIELD_COUNT = 4
// Six bits per field keep a packed posting a small integer, which V8 stores without allocating.
const BITS = 64
const MAX_TF = BITS - 1
const SHIFT = [1, BITS, BITS ** 2, BITS ** 3] as const

/** BM25F parameters: per-field weight and length normalisation, and the saturation `k1`. */
export interface Bm25fParameters {
  readonly weights: readonly number[]
  readonly b: readonly number[]
  readonly k1: number
}

/**
 * An inverted index of documents with {@link FIELD_COUNT} fields of term ids, scored with BM25F. Adding or
 * removing a document touches only that document's terms; field-length averages are running sums.
 */
export class Postings {
  /** term id -> the documents holding it, with their packed per-field term counts. */
  readonly #postings: Array<Posting | undefined> = []
  /** doc id -> its distinct term ids, to remove it again. */
  readonly #terms: Array<readonly number[] | undefined> = []
  #lengths = new Float64Array(64 * FIELD_COUNT)
  readonly #lengthSums = new Float64Array(FIELD_COUNT)
  /** Scratch for `add`: packed counts per term id of the document being added, and which ids are set. */
  #scratch = new Int32Array(256)
  readonly #seen: number[] = []
  #count = 0

  get count(): number {
    return this.#count
  }

  /** Index document `id` (a free id) from the term ids of each of its fields. */
  add(id: number, fields: readonly (readonly number[])[]): void {
    const seen = this.#seen
    for (let f = 0; f < FIELD_COUNT; f++) {
      const terms = fields[f] ?? []
      const shift = SHIFT[f] as number
      for (const term of terms) {
        if (term >= this.#scratch.length) this.#growScratch(term + 1)
        const current = this.#scratch[term] as number
        if (current === 0) seen.push(term)
        if (Math.floor(current / shift) % BITS < MAX_TF) this.#scratch[term] = current + shift
      }
      this.#setLength(id, f, terms.length)
    }
    for (const term of seen) {
      let posting = this.#postings[term]
      if (posting === undefined) this.#postings[term] = posting = new Posting()
      posting.push(id, this.#scratch[term] as number)
      this.#scratch[term] = 0
    }
    this.#terms[id] = seen.slice()
    seen.length = 0
    this.#count++
  }

  remove(id: number): void {
    const terms = this.#terms[id]
    if (terms === undefined) return
    for (const term of terms) {
      const posting = this.#postings[term]
      posting?.delete(id)
      if (posting?.length === 0) this.#postings[term] = undefined
    }
    for (let f = 0; f < FIELD_COUNT; f++) this.#setLength(id, f, 0)
    this.#terms[id] = undefined
    this.#count--
  }

  /**
   * Raises `scores[doc]` to `weight` x BM25F(term, doc) for every document holding `term` (a maximum, not a sum:
   * the words of one synonym group count once); a document scored for the first time is pushed on `touched`.
   */
  maximize(term: number, weight: number, p: Bm25fParameters, scores: Float64Array, touched: number[]): void {
    const posting = this.#postings[term]
    if (posting === undefined || this.#count === 0) return
    const n = posting.length
    const idf = Math.log(1 + (this.#count - n + 0.5) / (n + 0.5))
    const norms: number[] = []
    for (let f = 0; f < FIELD_COUNT; f++) {
      const avg = (this.#lengthSums[f] as number) / this.#count
      norms.push(avg > 0 ? (p.b[f] as number) / avg : 0)
    }
    const { k1, weights, b: bs } = p
    const lengths = this.#lengths
    const { ids, counts } = posting
    for (let i = 0; i < n; i++) {
      const id = ids[i] as number
      let tf = 0
      let rest = counts[i] as number
      for (let f = 0; f < FIELD_COUNT; f++) {
        const count = rest % BITS
        rest = (rest - count) / BITS
        if (count === 0) continue
        const b = bs[f] as number
        tf +=
          ((weights[f] as number) * count) / (1 - b + (norms[f] as number) * (lengths[id * FIELD_COUNT + f] as number))
      }
      if (tf === 0) continue
      const score = (weight * idf * tf * (k1 + 1)) / (k1 + tf)
      const before = scores[id] as number
      if (before === 0) touched.push(id)
      if (score > before) scores[id] = score
    }
  }

  #setLength(id: number, field: number, length: number): void {
    const at = id * FIELD_COUNT + field
    if (at >= this.#lengths.length) {
      const grown = new Float64Array(Math.max(this.#lengths.length * 2, (id + 1) * FIELD_COUNT))
      grown.set(this.#lengths)
      this.#lengths = grown
    }
    this.#lengthSums[field] = (this.#lengthSums[field] as number) + length - (this.#lengths[at] as number)
    this.#lengths[at] = length
  }

  #growScratch(size: number): void {
    const grown = new Int32Array(Math.max(size, this.#scratch.length * 2))
    grown.set(this.#scratch)
    this.#scratch = grown
  }
}

/** One term's documents: parallel arrays of small integers, unordered (removal swaps in the last entry). */
class Posting {
  readonly ids: number[] = []
  readonly counts: number[] = []

  get length(): number {
    return this.ids.length
  }

  push(id: number, counts: number): void {
    this.ids.push(id)
    this.counts.push(counts)
  }

  delete(id: number): void {
    const at = this.ids.indexOf(id)
    if (at < 0) return
    const lastId = this.ids.pop() as number
    const lastCount = this.counts.pop() as number
    if (at < this.ids.length) {
      this.ids[at] = lastId
      this.counts[at] = lastCount
    }
  }
}
