// The entry of dist/stripper.cjs: sucrase's transform, bundled into one CommonJS file at build time (see
// tsup.config.ts).
export { transform } from 'sucrase'
