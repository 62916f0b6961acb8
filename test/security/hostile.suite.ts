/**
 * Hostile programs every backend must survive (SPEC section 9). `hostileProgramSuite(label, create)`
 * registers the tests; call it at the top level of a vitest file. For each program: the host
 * survives, its event loop stays responsive (a setInterval probe measures the lag during the run),
 * the failure kind is the right one, and deadline overruns are reported (printed after the suite).
 */
import { afterAll, describe, expect, test } from 'vitest'
import { GUEST_GLOBALS } from '@ptc/sandbox'
import type { CodeRunRequest, CodeRunResult, CodeRuntime, JsonValue } from '@ptc/sandbox'
import { hostileProgramTests } from './hostile.programs.js'

export interface HostileSuiteOptions {
  /** Test name -> written reason it does not apply. */
  skip?: Record<string, string>
  /** Largest event-loop lag allowed during a run; `undefined` skips the check (inline isolation). */
  maxLagMs?: number
  /** Largest wall-clock overrun past `wallMs` allowed for a timed-out run. Default 1500 ms. */
  maxOverrunMs?: number
}

export interface HostileContext {
  it(name: string, fn: () => Promise<void>, timeoutMs?: number): void
  /** Runs with short default limits (cpuMs 500, wallMs 1000, memory 64 MiB) and checks lag. */
  run(code: string, request?: Partial<CodeRunRequest>): Promise<CodeRunResult>
  /** Asserts a timeout and records its overrun past the wall ceiling. */
  expectTimeout(name: string, r: CodeRunResult, wallMs: number, which?: RegExp): void
  runtime(): CodeRuntime
  globals: readonly string[]
}

export const HOSTILE_LIMITS = { cpuMs: 500, wallMs: 1000, memoryBytes: 64 * 1024 * 1024 }

async function echo(name: string, args: JsonValue): Promise<JsonValue> {
  return { name, args }
}

export function hostileProgramSuite(
  label: string,
  create: () => CodeRuntime | Promise<CodeRuntime>,
  options: HostileSuiteOptions = {},
): void {
  describe(`hostile programs: ${label}`, () => {
    let runtime: CodeRuntime | undefined
    const overruns: { name: string; wallMs: number; overrunMs: number }[] = []
    const lags: number[] = []
    afterAll(async () => {
      await runtime?.dispose()
      if (overruns.length > 0) {
        const rows = overruns.map((o) => `  ${o.name}: ended ${o.overrunMs.toFixed(1)} ms after its ${o.wallMs} ms deadline`)
        console.log(`[hostile ${label}] deadline overruns:\n${rows.join('\n')}\n  max event-loop lag: ${Math.max(0, ...lags).toFixed(1)} ms`)
      }
    })
    const getRuntime = async (): Promise<CodeRuntime> => (runtime ??= await create())
    const skip = options.skip ?? {}
    const ctx: HostileContext = {
      globals: GUEST_GLOBALS,
      runtime: () => {
        if (runtime === undefined) throw new Error('runtime not created')
        return runtime
      },
      it(name, fn, timeoutMs = 20_000) {
        const reason = skip[name]
        if (reason !== undefined) test.skip(`${name} — skipped: ${reason}`, fn)
        else test(name, async () => (await getRuntime(), fn()), timeoutMs)
      },
      async run(code, request = {}) {
        const rt = await getRuntime()
        let last = performance.now()
        let maxLag = 0
        const timer = setInterval(() => {
          const now = performance.now()
          maxLag = Math.max(maxLag, now - last - 10)
          last = now
        }, 10)
        try {
          return await rt.run({
            code,
            bindings: ['echo', 'slow', 'fail'],
            call: echo,
            ...request,
            limits: { ...HOSTILE_LIMITS, ...request.limits },
          })
        } finally {
          clearInterval(timer)
          maxLag = Math.max(maxLag, performance.now() - last - 10)
          lags.push(maxLag)
          if (options.maxLagMs !== undefined) expect(maxLag, 'event-loop lag during the run').toBeLessThan(options.maxLagMs)
        }
      },
      expectTimeout(name, r, wallMs, which) {
        expect(r.error?.kind, name).toBe('timeout')
        if (which !== undefined) expect(r.error?.message).toMatch(which)
        const overrunMs = r.stats.wallMs - wallMs
        if (/wall/i.test(r.error?.message ?? '')) {
          overruns.push({ name, wallMs, overrunMs })
          expect(overrunMs, `${name}: overrun past the wall ceiling`).toBeLessThan(options.maxOverrunMs ?? 1500)
        }
        expect(r.stats.wallMs).toBeLessThan(wallMs + (options.maxOverrunMs ?? 1500))
      },
    }
    hostileProgramTests(ctx)
  })
}
