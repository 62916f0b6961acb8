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
