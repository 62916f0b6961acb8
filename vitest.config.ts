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
    // Each of the two processes runs its share of the files one after another, in one module graph: they share
    // what the packages keep per process (the compiled engine module, caches), and a file restores what it
    // changes of the process (fake timers, spies, warning listeners). A process per file cost a process start
    // and a fresh import of the sources each: the suite took 646 s on 2 cores, 885 s of CPU; now 564 s and 768.
    isolate: false,
    execArgv: ['--no-node-snapshot'],
    testTimeout: 20_000,
    hookTimeout: 30_000,
  },
})
