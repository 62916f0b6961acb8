/** What a program (and so a model) reads when its `search_tools` query is refused; each names what to change. */
export const searchMessages = {
  emptyQuery: (): string =>
    'search_tools needs a non-empty query: describe the task in a few words ("create an issue"), ' +
    'give a tool name, or a name pattern such as /^github\\./i',
  patternTooLong: (length: number, max: number): string =>
    `the name pattern is ${length} characters; shorten it to at most ${max}`,
  patternFlags: (flags: string): string =>
    `the name pattern has the flag(s) "${flags}"; only "i" (ignore case) is supported: write /pattern/ or /pattern/i`,
  patternInvalid: (source: string, detail: string): string =>
    `the name pattern /${source}/ is not a valid RE2 regular expression (${detail}); fix it, or escape special ` +
    'characters with a backslash. Lookarounds and backreferences are not supported.',
} as const
