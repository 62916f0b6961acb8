import type { Registration } from '../registry/registration.js'

/** How the selected executor routes model-direct calls. */
export interface Route {
  /** The reserved transport and its compiled registration, when the executor serves one. */
  readonly transport?: Registration
  /** Code-only collapse: model-direct calls may name only the transport and the executor's built-ins. */
  readonly codeOnly: boolean
  /** The executor's own tools (`ToolExecutor.builtins`), callable model-direct and from programs. */
  readonly builtins?: ReadonlyMap<string, Registration>
}

/** The executor-owned registration a call names: the transport (model-direct only) or a built-in. */
export function ownedBy(route: Route, name: string, direct: boolean): Registration | undefined {
  if (direct && route.transport !== undefined && name === route.transport.name) return route.transport
  return route.builtins?.get(name)
}
