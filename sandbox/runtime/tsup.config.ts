import { defineConfig } from 'tsup'

export default defineConfig({
  entry: { index: 'src/index.ts', 'backend/index': 'src/backend/index.ts', 'conformance/index': 'src/conformance/index.ts', 'session/index': 'src/session/index.ts', 'prepare-worker': 'src/prepare-worker.ts' },
  format: ['esm'],
  clean: true,
  sourcemap: true,
  target: 'node20',
  external: ['vitest'],
})
