import { defineConfig } from 'tsup'

export default defineConfig({
  entry: { index: 'src/index.ts', shapes: 'src/shapes/index.ts' },
  format: ['esm'],
  clean: true,
  sourcemap: true,
  target: 'node20',
})
