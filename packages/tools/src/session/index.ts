export { JsonlSession, type JsonlRepair, type JsonlSessionOptions } from './jsonl.js'
export { MemorySession } from './memory.js'
export {
  parseJsonl,
  readJsonlSession,
  type JsonlInvalidLine,
  type JsonlPartialTail,
  type JsonlReadResult,
} from './read.js'
