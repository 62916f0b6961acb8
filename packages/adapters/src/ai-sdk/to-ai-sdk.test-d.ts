/** The AI SDK adapter's options, checked against the `ai` it is built with. */
import type { Tool } from 'ai'
import type { ToolsView } from '@ptc/tools'
import { expectTypeOf, test } from 'vitest'
import { toAiSdkTools, type AiSdkTools } from '../index.js'

declare const view: ToolsView
declare const search: Tool

test('deferral options: a search tool of the installed ai, with all tools or some deferred', () => {
  const all = toAiSdkTools(view, { deferLoading: true, alwaysLoaded: ['lookup'], toolSearch: search })
  const some = toAiSdkTools(view, { deferLoading: (name) => name.startsWith('crm.'), toolSearch: search })
  expectTypeOf(all).toEqualTypeOf<AiSdkTools>()
  expectTypeOf(some).toEqualTypeOf<AiSdkTools>()
  // @ts-expect-error: the search tool itself, not a provider's variant name
  toAiSdkTools(view, { deferLoading: true, toolSearch: 'bm25' })
  // @ts-expect-error: names, not a single name
  toAiSdkTools(view, { deferLoading: true, alwaysLoaded: 'lookup', toolSearch: search })
})
