import type { JsonValue } from '../json/types.js'
import type { ContentBlock } from '../types/content.js'

/** Icon hint for the generic card. */
export type ToolCallKind = 'read' | 'edit' | 'delete' | 'move' | 'search' | 'execute' | 'fetch' | 'other'

/** A file a call reads or changes, so an editor can follow it. */
export interface FileLocation {
  path: string
  line?: number
}

/** A file change; `oldText: null` for a new file. */
export interface FileDiff {
  path: string
  oldText: string | null
  newText: string
}

/** One line of a read window, 1-based. */
export interface ReadFileLine {
  number: number
  text: string
}

/** How the PENDING state of a call is shown. */
export type ToolCallView =
  | {
      card: 'generic'
      title: string
      kind?: ToolCallKind
      rawInput?: JsonValue
      content?: ContentBlock[]
      locations?: FileLocation[]
    }
  | { card: 'terminal'; title: string; description?: string; cwd?: string }
  | { card: 'diff'; title: string; diffs: FileDiff[]; locations?: FileLocation[] }

/** One file's matches in a completed search. */
export interface SearchFileMatches {
  path: string
  matches: { line: number; text: string }[]
}

/** One source of a completed web search. */
export interface WebSource {
  title: string
  url: string
  snippet?: string
}

/** How the COMPLETED state of a call is shown; it replaces the pending view. */
export type ToolResultView =
  | { card: 'generic'; title?: string; content?: ContentBlock[] }
  | { card: 'terminal'; title?: string; output?: string; exitCode?: number; signal?: string }
  | { card: 'diff'; title?: string; diffs: FileDiff[] }
  | { card: 'search'; shape: 'matches'; title?: string; truncated: boolean; total: number; files: SearchFileMatches[] }
  | { card: 'search'; shape: 'paths'; title?: string; truncated: boolean; total: number; paths: string[] }
  | {
      card: 'read'
      title?: string
      path: string
      /** 1-based first line requested; kept even when `lines` is empty. */
      offset: number
      lines: ReadFileLine[]
      totalLines: number
      lang?: string
      content?: string
    }
  | { card: 'web'; kind: 'search'; title?: string; sources: WebSource[]; answer?: string; truncated: boolean }
  | { card: 'web'; kind: 'fetch'; title?: string; url: string; statusCode: number; truncated: boolean }
