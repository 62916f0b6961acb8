export { ToolSearchIndex, type SearchDocument, type SearchHit, type SearchOptions } from './tool-search-index.js'
export { DEFAULT_TUNING, type SearchTuning } from './tuning.js'
