import { defineConfig } from 'tsup'

export default defineConfig({
  entry: {
    index: 'src/index.ts',
    'executor/index': 'src/executor/index.ts',
    'timeout/index': 'src/timeout/index.ts',
    'session/index': 'src/session/index.ts',
  },
  format: ['esm'],
  clean: true,
  sourcemap: true,
  target: 'node20',
})
