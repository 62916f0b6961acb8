/** Test support for harness authors: a fake runtime for bridge tests and a small PTC harness. */
export { FakeFailure, FakeRuntime, type FakeProgram } from './fake-runtime.js'
export { fixtureTools, ptcHarness, sleep, text, type PtcHarness, type PtcHarnessOptions } from './fixtures.js'
