/**
 * A vitest reporter that ends the run with the plain line CI reads:
 * `tests: N passed, N failed, N skipped`.
 */
import type { Reporter, TestModule } from 'vitest/node'

export default class SummaryReporter implements Reporter {
  onTestRunEnd(modules: ReadonlyArray<TestModule>): void {
    let passed = 0
    let failed = 0
    let skipped = 0
    for (const module of modules) {
      for (const test of module.children.allTests()) {
        const state = test.result().state
        if (state === 'passed') passed++
        else if (state === 'failed') failed++
        else skipped++
      }
      if (module.state() === 'failed' && [...module.children.allTests()].length === 0) failed++
    }
    process.stdout.write(`\ntests: ${passed} passed, ${failed} failed, ${skipped} skipped\n`)
  }
}
