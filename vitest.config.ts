import { defineConfig } from 'vitest/config'

export default defineConfig({
  resolve: { conditions: ['@ptc/source'] },
  ssr: { resolve: { conditions: ['@ptc/source'] } },
  test: {
    include: [
      'packages/*/src/**/*.test.ts',
      'sandbox/*/src/**/*.test.ts',
      'bindings/src/**/*.test.ts',
      'test/**/*.test.ts',
    ],
    typecheck: {
      enabled: true,
      include: ['packages/*/src/**/*.test-d.ts', 'bindings/src/**/*.test-d.ts'],
      tsconfig: './tsconfig.json',
    },
    reporters: ['default', './scripts/summary-reporter.ts'],
    pool: 'forks',
    // Two test files at once on CI's 2 cores (vitest's default leaves one core to itself): the suites
    // spend most of their time waiting on workers, child processes and timers, and must hold under load.
    maxWorkers: 2,
    execArgv: ['--no-node-snapshot'],
    testTimeout: 20_000,
    hookTimeout: 30_000,
  },
})
