import { defineConfig } from 'tsup'

export default defineConfig({
  entry: { index: 'src/index.ts', 'check/index': 'src/check/index.ts' },
  format: ['esm'],
  clean: true,
  sourcemap: true,
  target: 'node20',
  external: ['typescript'],
})
