import { configDefaults, defineConfig } from 'vitest/config'

/**
 * Files that measure this process as a whole (the CPU time or memory of the process and its threads and
 * children, the event loop's delay): each runs in a process of its own, where nothing another file left
 * behind (an idle pool, a heap to collect) is counted.
 */
const MEASURING = [
  'test/security/**/*.test.ts',
  'test/soak/**/*.test.ts',
  'sandbox/isolated-vm/src/containment.test.ts',
  'sandbox/isolated-vm/src/sessions.test.ts',
  'packages/tools/src/presentation/text.test.ts',
]

export default defineConfig({
  resolve: { conditions: ['@ptc/source'] },
  ssr: { resolve: { conditions: ['@ptc/source'] } },
  test: {
    reporters: ['default', './scripts/summary-reporter.ts'],
    pool: 'forks',
    // Three test files at once on CI's 2 cores (vitest's default leaves one core to itself): the suites
    // spend much of their time waiting on workers, child processes and timers, and must hold under load.
    // From a clean clone on 2 cores, `.ci/run` took 606 s with two (the cores 80% busy), 538 s with three.
    maxWorkers: 3,
    execArgv: ['--no-node-snapshot'],
    testTimeout: 20_000,
    hookTimeout: 30_000,
    projects: [
      {
        extends: true,
        test: {
          name: 'shared',
          include: [
            'packages/*/src/**/*.test.ts',
            'sandbox/*/src/**/*.test.ts',
            'bindings/src/**/*.test.ts',
            'test/**/*.test.ts',
          ],
          exclude: [...configDefaults.exclude, ...MEASURING],
          // The other files run one after another in one module graph per process: they share what the packages
          // keep per process (the compiled engine module, caches), and a file restores what it changes of the
          // process (fake timers, spies, warning listeners). A process per file cost a process start and a fresh
          // import of the sources each: the suite took 646 s on 2 cores, 885 s of CPU; without, 564 s and 768.
          isolate: false,
          typecheck: {
            enabled: true,
            include: ['packages/*/src/**/*.test-d.ts', 'bindings/src/**/*.test-d.ts'],
            // Only the type tests and what they import (`pnpm typecheck`, run before the suite, checks the
            // whole workspace): a second tsc of every file cost 18 s of CPU, this one 7.
            tsconfig: './tsconfig.test-d.json',
          },
        },
      },
      { extends: true, test: { name: 'measuring', include: MEASURING, isolate: true } },
    ],
  },
})
