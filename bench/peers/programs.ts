/**
 * The programs every runtime runs and the host tool every runtime calls. Only the expression that names the
 * tool differs (`tools.tool`, `api.bench.tool`, `env.tool`…): each runtime's own way of exposing it.
 */

/** The host tool, the same function for every runtime. */
export async function hostTool({ i }: { i: number }): Promise<{ ok: true; i: number }> {
  await null
  return { ok: true, i }
}

export type ProgramKind = 'trivial' | 'sequential' | 'parallel'

/** The body of an async function (top-level `await` and `return`), calling the tool through `tool`. */
export function programBody(kind: ProgramKind, calls: number, tool: string): string {
  switch (kind) {
    case 'trivial':
      return 'return 42'
    case 'sequential':
      return `let s = 0\nfor (let i = 0; i < ${calls}; i++) s += (await ${tool}({ i })).i\nreturn s`
    case 'parallel':
      return `const all = await Promise.all(Array.from({ length: ${calls} }, (_, i) => ${tool}({ i })))\nreturn all.reduce((s, r) => s + r.i, 0)`
  }
}

/** The completion value a correct run of the program gives. */
export function expectedValue(kind: ProgramKind, calls: number): number {
  return kind === 'trivial' ? 42 : (calls * (calls - 1)) / 2
}
