import { test } from 'vitest'
import type { CodeRunRequest, CodeRunResult, CodeRuntime, JsonValue } from '../types.js'

/** Options of `runtimeConformance`. */
export interface ConformanceOptions {
  /** Test name -> the written reason it does not apply to this backend. */
  skip?: Record<string, string>
  /** The backend keeps sandbox sessions (`CodeRunRequest.session`, `endSession`): run the session part. */
  sessions?: boolean
}

/** What each part of the suite gets: the shared runtime, a way to make fresh ones, and helpers. */
export interface SuiteContext {
  runtime(): CodeRuntime
  create(): Promise<CodeRuntime>
  /** Registers a test unless skipped (a skip keeps its reason in the test name). */
  it(name: string, fn: () => Promise<void>, timeoutMs?: number): void
  /** Runs `code` with an echo host by default (`call` resolves with `{ name, args }`). */
  run(code: string, request?: Partial<CodeRunRequest>, runtime?: CodeRuntime): Promise<CodeRunResult>
}

/** The default host: every binding echoes its name and arguments. */
export async function echo(name: string, args: JsonValue): Promise<JsonValue> {
  return { name, args }
}

export const BINDINGS = ['echo', 'fail', 'slow', 'odd-name', '__proto__', 'constructor', 'toString']

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms))
}

export function makeContext(
  getRuntime: () => CodeRuntime,
  create: () => CodeRuntime | Promise<CodeRuntime>,
  options: ConformanceOptions,
): SuiteContext {
  const skip = options.skip ?? {}
  return {
    runtime: getRuntime,
    create: async () => create(),
    it(name, fn, timeoutMs) {
      const reason = skip[name]
      if (reason !== undefined) test.skip(`${name} — skipped: ${reason}`, fn)
      else test(name, fn, timeoutMs)
    },
    run(code, request = {}, runtime = getRuntime()) {
      return runtime.run({ code, bindings: BINDINGS, call: echo, ...request })
    },
  }
}
