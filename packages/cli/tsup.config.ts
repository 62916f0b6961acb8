import { defineConfig } from 'tsup'

export default defineConfig({
  // `bin` starts with a shebang (tsup keeps it and marks the file executable). `data.json` of the demo
  // is imported with `with { type: 'json' }`, so esbuild inlines it: the built package needs no data file.
  entry: { index: 'src/index.ts', bin: 'src/bin.ts' },
  format: ['esm'],
  clean: true,
  sourcemap: true,
  target: 'node20',
  // Loaded only for TypeScript tools modules, from the user's install.
  external: ['tsx', 'tsx/esm/api'],
})
