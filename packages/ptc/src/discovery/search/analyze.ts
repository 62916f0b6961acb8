import { stemmer } from 'stemmer'
import { CANONICAL, PHRASES } from './synonyms.js'

/** Words that carry no meaning for finding a tool, in requests or in declarations. */
const STOPWORDS: ReadonlySet<string> = new Set(
  [
    'a an the of to for in on at by with from into onto about as and or but not no nor is are was were be been being',
    'this that these those it its i me we us our you your he she they them their there here what which whom how',
    'when where why can could would should will shall may might must do does did done have has had please want am',
    'need needs like let lets just some any so if then than also via using use used e g eg ie etc one',
  ]
    .join(' ')
    .split(' '),
)

/** Longest text analysed per call: a hostile description cannot make indexing slow. */
export const MAX_TEXT_CHARS = 4_000
/** Cached texts per analyzer before the cache is dropped (declarations repeat texts such as `owner`'s). */
const TEXT_CACHE_LIMIT = 20_000
const WORD_CACHE_LIMIT = 100_000

/**
 * The words of a name or a sentence, lower-cased: `createIssue`, `issues/create`, `HTTPServer`, `read_text-file`
 * and `github.list_prs` all split where a reader would.
 */
export function splitWords(text: string): string[] {
  const cut = text.length > MAX_TEXT_CHARS ? text.slice(0, MAX_TEXT_CHARS) : text
  // eslint-disable-next-line no-control-regex
  return /^[\x00-\x7f]*$/.test(cut) ? asciiWords(cut) : unicodeWords(cut)
}

const LOWER = 1
const UPPER = 2
const DIGIT = 3

function classOf(code: number): number {
  if (code >= 97 && code <= 122) return LOWER
  if (code >= 65 && code <= 90) return UPPER
  return code >= 48 && code <= 57 ? DIGIT : 0
}

/** One pass over ASCII text; the same boundaries as {@link unicodeWords}, several times faster. */
function asciiWords(text: string): string[] {
  const words: string[] = []
  let start = -1
  let previous = 0
  for (let i = 0; i <= text.length; i++) {
    const kind = i < text.length ? classOf(text.charCodeAt(i)) : 0
    if (kind === 0) {
      if (start >= 0) words.push(text.slice(start, i).toLowerCase())
      start = -1
    } else if (start < 0) start = i
    else if (kind === UPPER && (previous === LOWER || previous === DIGIT)) {
      words.push(text.slice(start, i).toLowerCase())
      start = i
    } else if (kind === LOWER && previous === UPPER && i - start > 1) {
      // `HTTPServer`: the last capital of a run starts the next word.
      words.push(text.slice(start, i - 1).toLowerCase())
      start = i - 1
    }
    previous = kind
  }
  return words
}

function unicodeWords(text: string): string[] {
  const spaced = text
    .replace(/([\p{Ll}\p{N}])(\p{Lu})/gu, '$1 $2')
    .replace(/(\p{Lu}+)(\p{Lu}\p{Ll})/gu, '$1 $2')
    .toLowerCase()
  return spaced.split(/[^\p{L}\p{N}]+/u).filter((word) => word !== '')
}

/** A name with case and separators ignored, for exact-name matching: `Issues/Create` -> `issuescreate`. */
export function normalizeName(name: string): string {
  return name.toLowerCase().replace(/[^\p{L}\p{N}]+/gu, '')
}

/**
 * Turns text into terms: words, abbreviations spelt out (`repo` -> `repository`), stop words dropped, Porter
 * stems. Indexed text becomes term ids of the analyzer's vocabulary, so postings never hash strings.
 */
export class Analyzer {
  readonly #stems = new Map<string, readonly string[]>()
  #texts = new Map<string, readonly number[]>()
  readonly #ids = new Map<string, number>()
  readonly #terms: string[] = []

  constructor(
    private readonly stem: boolean = true,
    private readonly abbreviations: boolean = true,
  ) {}

  /** How many distinct terms the vocabulary holds (the next id). */
  get vocabularySize(): number {
    return this.#terms.length
  }

  /** The term ids of indexed text, adding new terms to the vocabulary. */
  index(text: string): readonly number[] {
    const cached = this.#texts.get(text)
    if (cached !== undefined) return cached
    const out: number[] = []
    for (const word of this.#words(text)) {
      for (const term of this.word(word)) {
        let id = this.#ids.get(term)
        if (id === undefined) {
          id = this.#terms.length
          this.#ids.set(term, id)
          this.#terms.push(term)
        }
        out.push(id)
      }
    }
    if (this.#texts.size >= TEXT_CACHE_LIMIT) this.#texts = new Map()
    this.#texts.set(text, out)
    return out
  }

  /** The terms of a request, without touching the vocabulary. */
  terms(text: string): string[] {
    const out: string[] = []
    for (const word of this.#words(text)) for (const term of this.word(word)) out.push(term)
    return out
  }

  /** The words of a text, with the two-word phrases of {@link PHRASES} joined. */
  #words(text: string): string[] {
    const words = splitWords(text)
    if (!this.abbreviations) return words
    const out: string[] = []
    for (let i = 0; i < words.length; i++) {
      const phrase = i + 1 < words.length ? PHRASES.get(`${words[i]} ${words[i + 1]}`) : undefined
      if (phrase === undefined) out.push(words[i] as string)
      else {
        out.push(phrase)
        i++
      }
    }
    return out
  }

  /** The id of a term, if any indexed text had it. */
  idOf(term: string): number | undefined {
    return this.#ids.get(term)
  }

  /** The terms of one lower-cased word (none for a stop word or a single letter). */
  word(word: string): readonly string[] {
    let terms = this.#stems.get(word)
    if (terms !== undefined) return terms
    const spelt = this.abbreviations ? CANONICAL.get(word) : undefined
    const parts = spelt === undefined ? [word] : spelt.split(' ')
    terms = parts
      // Numbers in a request are values (`issue #42`), not words a declaration would share.
      .filter((part) => part.length > 1 && !STOPWORDS.has(part) && !/^\d+$/.test(part))
      .map((part) => (this.stem ? stemmer(part) : part))
    if (this.#stems.size < WORD_CACHE_LIMIT) this.#stems.set(word, terms)
    return terms
  }
}
