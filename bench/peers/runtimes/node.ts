import { hostTool } from '../programs.js'
import type { Driver, RuntimeSpec } from './driver.js'

type AsyncFunctionConstructor = new (...args: string[]) => (tool: typeof hostTool) => Promise<unknown>
const AsyncFunction = Object.getPrototypeOf(async () => undefined).constructor as AsyncFunctionConstructor

/** The baseline: the program compiled as a host async function, calling the tool directly. No sandbox. */
export const plainNode: RuntimeSpec = {
  id: 'node',
  label: 'plain Node (no sandbox)',
  kind: 'baseline',
  tool: 'tool',
  packages: [],
  method:
    'the same program text compiled as a host `AsyncFunction`, the tool passed in: what a sub-call costs without any sandbox',
  load: async () => async (): Promise<Driver> => ({
    run: (body) => new AsyncFunction('tool', body)(hostTool),
    dispose: async () => undefined,
  }),
}
