/** The schemas of the tools module of packages/cli/README.md ("Your tools"): its program block is checked against them. */
import { defineTool, type ToolDefinition } from '@ptc/tools'

export const tools: ToolDefinition[] = [
  defineTool({
    name: 'get_weather',
    description: 'Current temperature in a city, in degrees Celsius.',
    parameters: { city: { type: 'string', required: true } },
    output: {
      schema: {
        type: 'object',
        additionalProperties: false,
        properties: { celsius: { type: 'number', required: true } },
      },
      render: (args, value) => [{ type: 'text', text: `${args.city}: ${value.celsius} °C` }],
    },
    isConcurrencySafe: () => true,
    execute: async () => ({ celsius: 0 }),
  }),
]
