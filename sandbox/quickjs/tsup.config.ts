import { defineConfig } from 'tsup'

export default defineConfig({
  // The worker is its own entry: worker isolation starts `dist/worker-entry.js` beside `dist/index.js`.
  entry: { index: 'src/index.ts', 'worker-entry': 'src/engine/worker-entry.ts' },
  format: ['esm'],
  // The workspace packages it imports are read from their built .d.ts, not their sources (scripts/build-js.ts).
  dts: { entry: { index: 'src/index.ts' }, compilerOptions: { customConditions: [] } },
  clean: true,
  sourcemap: true,
  target: 'node20',
})
