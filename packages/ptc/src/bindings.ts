/**
 * A run's bindings and the SDK declarations: the tools a program may call, each bound to the
 * registration it was admitted under, and the TypeScript text the model reads about them.
 */
import { renderDeclarations, type BindingTool } from '@ptc/bindings'
import {
  RUN_CODE,
  type ToolDefinition,
  type ToolExecutorServices,
  type ToolRunContext,
  type ToolSchema,
} from '@ptc/tools'

/** One tool a program may call: the definition it was bound to and its frozen schema. */
export interface Binding {
  readonly definition: ToolDefinition
  readonly schema: Readonly<ToolSchema>
}

/**
 * Freeze the bindings of a run: the scope's visible, admitted tools (never the transport) and the executor's
 * built-in tools. The services hand
 * out each registration's view, whose `parameters` is the frozen copy taken at registration, so every
 * sub-call's `schema` is what `schemas()` declares.
 */
export function buildBindings(
  services: ToolExecutorServices,
  ctx: Pick<ToolRunContext, 'agent' | 'toolSet'>,
): Map<string, Binding> {
  const bindings = new Map<string, Binding>()
  // The executor's own tools (search_tools) last: reserved names, so no registration shadows them.
  for (const definition of [...callableTools(services, ctx).values(), ...services.builtins()]) {
    const schema = Object.freeze({
      name: definition.name,
      description: definition.description,
      parameters: definition.parameters,
    })
    bindings.set(definition.name, Object.freeze({ definition, schema }))
  }
  return bindings
}

/** The registered tools an agent may call in a step, by name: visible, admitted and executable, never the transport. */
export function callableTools(
  services: ToolExecutorServices,
  ctx: Pick<ToolRunContext, 'agent' | 'toolSet'>,
): Map<string, ToolDefinition> {
  const callable = new Map<string, ToolDefinition>()
  for (const definition of services.definitions(ctx.agent, ctx.toolSet)) {
    // Without a step set, definitions() also lists conditional registrations, which cannot execute.
    if (definition.name === RUN_CODE || services.executable(definition.name, ctx.agent, ctx.toolSet) !== definition)
      continue
    callable.set(definition.name, definition)
  }
  return callable
}

/**
 * The SDK declarations of a set of definitions, as the model reads them. `describe()` is given the
 * registrations' views: `parameters` and `output.schema` are the frozen copies taken at registration.
 */
export function declarationsOf(definitions: readonly ToolDefinition[]): string {
  return renderDeclarations(definitions.filter((d) => d.name !== RUN_CODE).map(bindingTool))
}

/**
 * `declarationsOf` that remembers its last answer: a harness asks for the model input every turn, mostly for the
 * same tools, and rendering is linear in their schemas (1 000 tools of large schemas took seconds of the host's
 * thread). The same answer is given again while the tools are the same registrations (the views `describe()` is
 * given, whose schemas are frozen at registration) with the same names, descriptions and schema objects. Each is
 * read once per request, and what is compared is what was rendered (a description getter may answer differently
 * at each read). `render`: the renderer (tests count its calls).
 */
export function rememberedDeclarations(
  render: (tools: readonly BindingTool[]) => string = renderDeclarations,
): (definitions: readonly ToolDefinition[]) => string {
  let last:
    | {
        readonly definitions: readonly ToolDefinition[]
        readonly entries: readonly BindingTool[]
        readonly text: string
      }
    | undefined
  return (definitions) => {
    const kept = definitions.filter((d) => d.name !== RUN_CODE)
    const entries = kept.map(bindingTool)
    const before = last
    if (
      before !== undefined &&
      before.entries.length === entries.length &&
      entries.every((e, i) => kept[i] === before.definitions[i] && sameEntry(e, before.entries[i]))
    ) {
      return before.text
    }
    const text = render(entries)
    last = { definitions: kept, entries, text }
    return text
  }
}

/** What the declarations of one tool are rendered from, read once. */
export function bindingTool(d: ToolDefinition): BindingTool {
  return { name: d.name, description: d.description, parameters: d.parameters, output: d.output.schema }
}

function sameEntry(a: BindingTool, b: BindingTool | undefined): boolean {
  return (
    b !== undefined &&
    a.name === b.name &&
    a.description === b.description &&
    a.parameters === b.parameters &&
    a.output === b.output
  )
}
