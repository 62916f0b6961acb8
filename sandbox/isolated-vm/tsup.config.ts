import { defineConfig } from 'tsup'

export default defineConfig({
  // The engine child process is its own entry: `containment: 'process'` forks `dist/child-entry.js`
  // beside `dist/index.js`.
  entry: { index: 'src/index.ts', 'child-entry': 'src/engine/child-entry.ts' },
  format: ['esm'],
  clean: true,
  sourcemap: true,
  target: 'node20',
  // Optional native dependency: loaded lazily at runtime, never bundled.
  external: ['isolated-vm'],
})
