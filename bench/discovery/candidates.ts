/**
 * The search engines compared in search.ts, behind one small interface: ptc's hand-written BM25F index, and
 * MiniSearch and Orama with the same fields and field weights, each with its own text analysis and with ptc's
 * (stems, canonical forms, synonyms where the library can weight them).
 */
import MiniSearch from 'minisearch'
import { create, insert, search as oramaSearch } from '@orama/orama'
import { DEFAULT_TUNING, ToolSearchIndex, type SearchTuning } from '../../packages/ptc/src/discovery/search/index.js'
import { Analyzer, splitWords } from '../../packages/ptc/src/discovery/search/analyze.js'
import { documentText } from '../../packages/ptc/src/discovery/search/fields.js'
import { SYNONYMS } from '../../packages/ptc/src/discovery/search/synonyms.js'
import type { CatalogTool } from '../../test/fixtures/catalogs/types.js'

export interface Engine {
  add(tool: CatalogTool): void
  search(query: string, limit: number): string[]
}

export interface Candidate {
  readonly name: string
  create(): Engine
}

const [W_NAME, W_DESCRIPTION, W_PARAMETER_NAMES, W_PARAMETER_TEXT] = DEFAULT_TUNING.weights
const FIELDS = ['name', 'description', 'parameterNames', 'parameterText'] as const
const BOOST = {
  name: W_NAME,
  description: W_DESCRIPTION,
  parameterNames: W_PARAMETER_NAMES,
  parameterText: W_PARAMETER_TEXT,
}

/** The four fields as plain text; names split into words for every engine (no library splits `createIssue`). */
function fieldsOf(tool: CatalogTool): {
  id: string
  name: string
  description: string
  parameterNames: string
  parameterText: string
} {
  const text = documentText(tool.name, tool.description, tool.parameters)
  return {
    id: tool.name,
    name: splitWords(tool.name).join(' '),
    description: tool.description,
    parameterNames: text.parameterNames.flatMap((n) => splitWords(n)).join(' '),
    parameterText: text.parameterText.join(' '),
  }
}

/** ptc's index, with the default tuning or one of the ablation steps. */
export function ptc(name: string, tuning: Partial<SearchTuning> = {}): Candidate {
  return {
    name,
    create: () => {
      const index = new ToolSearchIndex(tuning)
      return {
        add: (tool) => index.add({ key: tool.name, description: tool.description, parameters: tool.parameters }),
        search: (query, limit) => index.search(query, { limit }).map((hit) => hit.key),
      }
    },
  }
}

export function miniSearch(withPtcAnalysis: boolean): Candidate {
  return {
    name: withPtcAnalysis ? 'MiniSearch 7, ptc analysis + weighted synonyms' : 'MiniSearch 7, its own analysis',
    create: () => {
      const analyzer = new Analyzer()
      let originals = new Set<string>()
      const analysis = withPtcAnalysis
        ? {
            tokenize: (text: string) => analyzer.terms(text),
            processTerm: (term: string) => term,
            searchOptions: {
              tokenize: (text: string) => analyzer.terms(text),
              processTerm: (term: string) => [term, ...(SYNONYMS.get(term) ?? []).map((s) => s.stem)],
              boostTerm: (term: string) => (originals.has(term) ? 1 : DEFAULT_TUNING.synonymWeight),
            },
          }
        : {}
      const index = new MiniSearch({ fields: [...FIELDS], idField: 'id', ...analysis })
      return {
        add: (tool) => index.add(fieldsOf(tool)),
        search: (query, limit) => {
          originals = new Set(analyzer.terms(query))
          return index
            .search(query, { boost: BOOST, combineWith: 'OR' })
            .slice(0, limit)
            .map((hit) => String(hit.id))
        },
      }
    },
  }
}

export function orama(withPtcAnalysis: boolean): Candidate {
  return {
    name: withPtcAnalysis ? 'Orama 3, ptc analysis + unweighted synonyms' : 'Orama 3, its own analysis (stemming on)',
    create: () => {
      const analyzer = new Analyzer()
      const tokenizer = withPtcAnalysis
        ? {
            language: 'english',
            normalizationCache: new Map<string, string>(),
            tokenize: (raw: string) => analyzer.terms(raw),
          }
        : { stemming: true }
      const schema = {
        id: 'string',
        name: 'string',
        description: 'string',
        parameterNames: 'string',
        parameterText: 'string',
      } as const
      const db = create({ schema, components: { tokenizer } })
      return {
        add: (tool) => void insert(db, fieldsOf(tool)),
        search: (query, limit) => {
          const term = withPtcAnalysis ? expand(analyzer, query) : query
          const results = oramaSearch(db, { term, properties: [...FIELDS], boost: BOOST, limit, threshold: 1 })
          if (results instanceof Promise)
            throw new Error('Orama answered asynchronously; the benchmark times synchronous engines')
          return results.hits.map((hit) => hit.id)
        },
      }
    },
  }
}

/** A query with its words' synonyms appended, for an engine that cannot weight query terms. */
function expand(analyzer: Analyzer, query: string): string {
  const terms = analyzer.terms(query)
  return [...terms, ...terms.flatMap((t) => (SYNONYMS.get(t) ?? []).filter((s) => s.head).map((s) => s.stem))].join(' ')
}
