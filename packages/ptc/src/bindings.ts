/**
 * A run's bindings and the SDK declarations: the tools a program may call, each bound to the
 * registration it was admitted under, and the TypeScript text the model reads about them.
 */
import { renderDeclarations } from '@ptc/bindings'
import { RUN_CODE, type ToolDefinition, type ToolExecutorServices, type ToolRunContext } from '@ptc/tools'
import type { Binding } from './scheduler.js'

/**
 * Freeze the bindings of a run: the scope's visible, admitted tools (never the transport). The services hand
 * out each registration's view, whose `parameters` is the frozen copy taken at registration, so every
 * sub-call's `schema` is what `schemas()` declares.
 */
export function buildBindings(services: ToolExecutorServices, ctx: Pick<ToolRunContext, 'agent' | 'toolSet'>): Map<string, Binding> {
  const bindings = new Map<string, Binding>()
  for (const definition of services.definitions(ctx.agent, ctx.toolSet)) {
    // Without a step set, definitions() also lists conditional registrations, which cannot execute.
    if (definition.name === RUN_CODE || services.executable(definition.name, ctx.agent, ctx.toolSet) !== definition) continue
    const schema = Object.freeze({ name: definition.name, description: definition.description, parameters: definition.parameters })
    bindings.set(definition.name, Object.freeze({ definition, schema }))
  }
  return bindings
}

/**
 * The SDK declarations of a set of definitions, as the model reads them. `describe()` is given the
 * registrations' views: `parameters` and `output.schema` are the frozen copies taken at registration.
 */
export function declarationsOf(definitions: readonly ToolDefinition[]): string {
  return renderDeclarations(
    definitions.filter((d) => d.name !== RUN_CODE).map((d) => ({ name: d.name, description: d.description, parameters: d.parameters, output: d.output.schema })),
  )
}

/**
 * `declarationsOf` that remembers its last answer: a harness asks for the model input every turn, mostly for the
 * same tools, and rendering is linear in their schemas (1 000 tools of large schemas took seconds of the host's
 * thread). The same answer is given again while the tools are the same registrations (the views `describe()` is
 * given, whose schemas are frozen at registration) with the same names and descriptions, which a definition may
 * still change (`describe()` reads them through the view).
 */
export function rememberedDeclarations(): (definitions: readonly ToolDefinition[]) => string {
  let last: { readonly definitions: readonly ToolDefinition[]; readonly names: readonly string[]; readonly descriptions: readonly string[]; readonly text: string } | undefined
  return (definitions) => {
    if (last !== undefined && last.definitions.length === definitions.length && definitions.every((d, i) => d === last?.definitions[i] && d.name === last.names[i] && d.description === last.descriptions[i])) {
      return last.text
    }
    const copy = [...definitions]
    const text = declarationsOf(copy)
    last = { definitions: copy, names: copy.map((d) => d.name), descriptions: copy.map((d) => d.description), text }
    return text
  }
}
