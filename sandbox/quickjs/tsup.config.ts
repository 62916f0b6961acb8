import { defineConfig } from 'tsup'

export default defineConfig({
  // The worker is its own entry: worker isolation starts `dist/worker-entry.js` beside `dist/index.js`.
  entry: { index: 'src/index.ts', 'worker-entry': 'src/engine/worker-entry.ts' },
  format: ['esm'],
  clean: true,
  sourcemap: true,
  target: 'node20',
})
