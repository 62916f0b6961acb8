import type { JsonSchemaNode } from '@ptc/tools'
import { Analyzer, normalizeName } from './analyze.js'
import { documentText } from './fields.js'
import { searchMessages } from './messages.js'
import { Postings } from './postings.js'
import { compileNamePattern, isRegexQuery } from './regex-query.js'
import { SYNONYMS } from './synonyms.js'
import { DEFAULT_TUNING, type SearchTuning } from './tuning.js'

export interface SearchDocument {
  /** The tool's name, unique in the index. */
  readonly key: string
  readonly description: string
  /** The tool's parameter schema. */
  readonly parameters: JsonSchemaNode
}

export interface SearchHit {
  readonly key: string
  readonly score: number
}

export interface SearchOptions {
  /** 1..50; other values are clamped. */
  readonly limit: number
  /** Only keys it accepts are returned; called only for a hit that would enter the top `limit`. */
  readonly filter?: (key: string) => boolean
}

/** Longest query analysed; the rest is ignored (a program may pass anything). */
const MAX_QUERY_CHARS = 1_000
/** Query concepts tracked for coverage: one bit each. */
const MAX_CONCEPTS = 31
const MAX_LIMIT = 50

/**
 * Ranks tools for a request: an exact name first (case and separators ignored), else BM25F over the name's
 * words, the description and the parameters, with stemming and synonym expansion; `/pattern/i` matches names.
 */
export class ToolSearchIndex {
  readonly #tuning: SearchTuning
  readonly #analyzer: Analyzer
  readonly #postings = new Postings()
  readonly #ids = new Map<string, number>()
  readonly #keys: Array<string | undefined> = []
  readonly #free: number[] = []
  /** Normalised full name, and normalised name after the namespace, -> ids. */
  readonly #exact = new Map<string, Set<number>>()
  #scores = new Float64Array(64)
  #masks = new Int32Array(64)
  /** One query word's best score per document, while that word is scored. */
  #concept = new Float64Array(64)

  constructor(tuning: Partial<SearchTuning> = {}) {
    this.#tuning = { ...DEFAULT_TUNING, ...tuning }
    this.#analyzer = new Analyzer(this.#tuning.stem, this.#tuning.abbreviations)
  }

  get size(): number {
    return this.#ids.size
  }

  has(key: string): boolean {
    return this.#ids.has(key)
  }

  add(doc: SearchDocument): void {
    this.remove(doc.key)
    const id = this.#free.pop() ?? this.#keys.length
    this.#keys[id] = doc.key
    this.#ids.set(doc.key, id)
    const description = typeof doc.description === 'string' ? doc.description : ''
    const text = documentText(doc.key, description, doc.parameters)
    const a = this.#analyzer
    const names: number[] = []
    for (const name of text.parameterNames) for (const term of a.index(name)) names.push(term)
    const prose: number[] = []
    if (this.#tuning.weights[3] !== 0)
      for (const line of text.parameterText) for (const term of a.index(line)) prose.push(term)
    this.#postings.add(id, [a.index(text.name), a.index(text.description), names, prose])
    for (const name of exactNames(doc.key)) {
      let set = this.#exact.get(name)
      if (set === undefined) this.#exact.set(name, (set = new Set()))
      set.add(id)
    }
    if (id >= this.#scores.length) this.#grow(id + 1)
  }

  remove(key: string): boolean {
    const id = this.#ids.get(key)
    if (id === undefined) return false
    this.#postings.remove(id)
    for (const name of exactNames(key)) {
      const set = this.#exact.get(name)
      set?.delete(id)
      if (set?.size === 0) this.#exact.delete(name)
    }
    this.#ids.delete(key)
    this.#keys[id] = undefined
    this.#free.push(id)
    return true
  }

  search(query: string, options: SearchOptions): SearchHit[] {
    const text = typeof query === 'string' ? query.trim() : ''
    if (text === '') throw new TypeError(searchMessages.emptyQuery())
    const limit = Math.max(1, Math.min(MAX_LIMIT, Math.floor(options.limit) || 1))
    const top = new TopHits(limit, options.filter)
    if (isRegexQuery(text)) {
      const pattern = compileNamePattern(text)
      for (const [key] of this.#ids) if (pattern.test(key)) top.offer(key, 1)
      return top.hits()
    }
    // An exact name outranks every ranked hit: the full name first, then the name after a namespace.
    const normalized = normalizeName(text)
    const exact = new Map<number, number>()
    for (const id of this.#exact.get(`.${normalized}`) ?? []) exact.set(id, 1)
    for (const id of this.#exact.get(normalized) ?? []) exact.set(id, 2)
    const touched: number[] = []
    const concepts = this.#score(text.slice(0, MAX_QUERY_CHARS), touched)
    let best = 0
    const exponent = this.#tuning.coverage
    for (const id of touched) {
      const matched = popcount(this.#masks[id] as number)
      const score = (this.#scores[id] as number) * (exponent === 0 ? 1 : (matched / concepts) ** exponent)
      this.#scores[id] = 0
      this.#masks[id] = 0
      best = Math.max(best, score)
      if (!exact.has(id)) top.offer(this.#keys[id] as string, round(score))
    }
    for (const [id, tier] of exact) top.offer(this.#keys[id] as string, round(best + tier))
    return top.hits()
  }

  /**
   * Scores every document sharing a term with the query into `#scores`, and the query words it matched into
   * `#masks`; returns the number of query words. A word scores its best variant: itself or a weaker synonym.
   */
  #score(query: string, touched: number[]): number {
    const concepts = this.#concepts(query)
    const p = { weights: this.#tuning.weights, b: this.#tuning.b, k1: this.#tuning.k1 }
    const best = this.#concept
    const matched: number[] = []
    concepts.forEach((variants, i) => {
      for (const [variant, weight] of variants) {
        const id = this.#analyzer.idOf(variant)
        if (id !== undefined) this.#postings.maximize(id, weight, p, best, matched)
      }
      for (const id of matched) {
        if (this.#scores[id] === 0) touched.push(id)
        this.#scores[id] = (this.#scores[id] as number) + (best[id] as number)
        this.#masks[id] = (this.#masks[id] as number) | (1 << i)
        best[id] = 0
      }
      matched.length = 0
    })
    return Math.max(1, concepts.length)
  }

  /**
   * The query's words, each with its weighted variants (itself, its synonyms). A word that is a synonym of an
   * earlier one joins that word's entry.
   */
  #concepts(query: string): Array<Map<string, number>> {
    const { synonymWeight, headWeight, mergeSynonyms } = this.#tuning
    const concepts: Array<Map<string, number>> = []
    for (const term of new Set(this.#analyzer.terms(query))) {
      const joined = mergeSynonyms ? concepts.find((c) => c.has(term)) : undefined
      const variants = joined ?? new Map<string, number>()
      variants.set(term, 1)
      if (synonymWeight > 0) {
        for (const { stem, head } of SYNONYMS.get(term) ?? []) {
          const weight = head ? headWeight : synonymWeight
          if ((variants.get(stem) ?? 0) < weight) variants.set(stem, weight)
        }
      }
      if (joined === undefined && concepts.length < MAX_CONCEPTS) concepts.push(variants)
    }
    return concepts
  }

  #grow(size: number): void {
    const scores = new Float64Array(Math.max(size, this.#scores.length * 2))
    this.#scores = scores
    this.#masks = new Int32Array(scores.length)
    this.#concept = new Float64Array(scores.length)
  }
}

/** The keys under which a name counts as exactly asked for: the whole name, and what follows its namespace. */
function exactNames(key: string): string[] {
  const dot = key.lastIndexOf('.')
  const whole = normalizeName(key)
  return dot > 0 && dot < key.length - 1 ? [whole, `.${normalizeName(key.slice(dot + 1))}`] : [whole]
}

function popcount(mask: number): number {
  let count = 0
  for (let m = mask; m !== 0; m &= m - 1) count++
  return count
}

function round(score: number): number {
  return Math.round(score * 10_000) / 10_000
}

/** The best `limit` hits offered, ranked by score then key; the filter runs only on hits that would enter. */
class TopHits {
  readonly #hits: SearchHit[] = []
  constructor(
    private readonly limit: number,
    private readonly filter: ((key: string) => boolean) | undefined,
  ) {}

  /** Offers each key at most once. */
  offer(key: string, score: number): void {
    const hits = this.#hits
    if (hits.length === this.limit && !before(key, score, hits[hits.length - 1] as SearchHit)) return
    if (this.filter !== undefined && !this.filter(key)) return
    let at = hits.length
    while (at > 0 && before(key, score, hits[at - 1] as SearchHit)) at--
    hits.splice(at, 0, { key, score })
    if (hits.length > this.limit) hits.pop()
  }

  hits(): SearchHit[] {
    return [...this.#hits]
  }
}

function before(key: string, score: number, hit: SearchHit): boolean {
  return score > hit.score || (score === hit.score && key < hit.key)
}
