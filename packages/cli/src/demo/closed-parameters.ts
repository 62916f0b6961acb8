import { formatViolations, ToolArgsError, type ToolDefinition, type ToolRunContext } from '@ptc/tools'

/**
 * The DSL's parameter root is an open object: an unknown key validates and is
 * ignored. For a filter that is a trap (`customer_id` instead of `customerId`
 * silently lists every customer's orders), so the shop's tools refuse unknown
 * keys with `INVALID_ARGS`, naming the known ones.
 */
export function closedParameters(tool: ToolDefinition): ToolDefinition {
  const known = Object.keys(tool.parameters.properties ?? {})
  return Object.freeze({
    ...tool,
    execute: (args: unknown, ctx: ToolRunContext): Promise<unknown> => {
      const extra =
        typeof args === 'object' && args !== null ? Object.keys(args).filter((key) => !known.includes(key)) : []
      if (extra.length === 0) return tool.execute(args, ctx)
      const violations = extra.map((key) => ({
        path: `/${key}`,
        message: `is not a ${tool.name} argument (known: ${known.join(', ') || 'none'})`,
      }))
      return Promise.reject(new ToolArgsError(`invalid arguments: ${formatViolations(violations)}`, violations))
    },
  })
}
